// Package openai is the adapter for OpenAI Chat Completions and the servers that speak it
// (Azure, vLLM, Groq, OpenRouter, ...), and for the OpenAI Responses API as an upstream
// transport (Responses, the provider option `api: responses`). It decides how an llm.Request
// becomes a Chat Completions or a Responses body, how an upstream's answer before the stream
// maps to an *llm.Error kind, and how the streamed chunks or events become llm.Events,
// including when a stream is complete and when it was truncated.
//
// openai-go carries the HTTP call (base URL, auth, headers, query) with its retries off:
// retrying belongs to the fallback chain. Its SSE decoder is not used: it drops a last event
// cut before its blank line and reports EOF as clean (DESIGN §10); internal/sse decodes the
// body instead.
//
// Prompt caching and thinking asked in another wire (issue 46, session.go): OpenAI caches
// implicitly, so cache breakpoints are never sent nor counted as dropped; the conversation
// key becomes a derived prompt_cache_key and a thinking budget a reasoning effort, for
// OpenAI's own API and Azure only (Config.OpenAI), and the effort for reasoning models only.
// A Responses upstream gets back only reasoning of its own wire (or of none named).
package openai
