// Package anthropic is the adapter for the Anthropic Messages API (POST /v1/messages). It
// decides how an llm.Request (Chat Completions terms) becomes a Messages body, how an
// upstream's answer before the stream maps to an *llm.Error kind, and how the streamed
// events become the same llm.Events the openai adapter produces, including when a stream is
// complete (message_stop) and when it was truncated.
//
// The HTTP call is plain net/http (x-api-key, anthropic-version, extra headers such as
// anthropic-beta; always stream: true; no retries: they belong to the fallback chain). The
// body is framed by r3labs/sse/v2's EventStreamReader (issue 6), minding DESIGN §10: it
// returns the bytes after the last blank line as if they were an event, and says io.EOF for
// a cancellation, so endReader marks an unterminated tail and the stream checks its context.
//
// # Request translation
//
//	| Chat Completions                    | Messages API                                   | notes |
//	|-------------------------------------|------------------------------------------------|-------|
//	| system / developer messages         | system (a string, or text blocks)              | all of them, in order, wherever they stand in the conversation |
//	| user text / image_url parts         | text / image blocks                            | https URL -> source {type: url}; data: URL -> source {type: base64, media_type}; detail dropped; a non-base64 data: URL is a 400 |
//	| user file parts                     | document blocks                                | PDF bytes -> source {type: base64}, PDF http(s) URL -> source {type: url}, text/plain bytes -> source {type: text}; name as title; other types and stored files: Unsupported 400 |
//	| user audio parts                    | -                                              | Unsupported 400: the Messages API takes no audio |
//	| assistant content, refusal          | text blocks                                    | |
//	| assistant tool_calls                | tool_use blocks (input = parsed arguments)     | "" -> {}; arguments that are not a JSON object (e.g. cut by max_tokens) are a 400 |
//	| assistant reasoning (llm.Reasoning) | thinking {thinking, signature} first in turn   | Wire anthropic, bedrock (Claude signatures are valid on every Claude platform) or "" only, others dropped (a foreign signature is a 400); Redacted -> redacted_thinking {data}, and Text "" with Wire "" by the old convention; an empty thinking with a signature (display omitted) stays thinking; without a signature dropped |
//	| tool messages                       | tool_result blocks (tool_use_id) in a user turn | consecutive results merged into one turn, placed before any text of that turn |
//	| adjacent messages of one role       | one turn                                       | the API requires alternation; empty messages dropped |
//	| tool call ids                       | same ids                                       | characters outside [a-zA-Z0-9_-] become "_" (tool_use and tool_result alike) |
//	| tools                               | {name, description, input_schema}              | no parameters -> {"type":"object","properties":{}}; strict dropped |
//	| tool_choice auto/required/none      | {type: auto / any / none}                      | left out when the request has no tools |
//	| tool_choice {function: {name}}      | {type: tool, name}                             | other object types (allowed_tools, custom) are a 400 |
//	| parallel_tool_calls: false          | tool_choice.disable_parallel_tool_use: true    | not with none |
//	| max_tokens / max_completion_tokens  | max_tokens                                     | neither: Config.DefaultMaxTokens, else 8192 for Claude 4+, 4096 otherwise |
//	| reasoning_effort low/medium/high    | thinking {enabled, budget 1024/4096/16384}     | no client limit: max_tokens = budget + default; a client limit L holds: budget = min(budget, L-1), no thinking if < 1024; minimal/none/other: no thinking; a forced tool_choice (required, function) turns thinking off; with thinking, temperature and top_k are dropped, and top_p below 0.95 |
//	| temperature                         | temperature                                    | clamped to 1 (Anthropic's range is 0..1) |
//	| top_p                               | top_p                                          | dropped when temperature is also set (newer models refuse both) |
//	| top_k (non-standard, Extra)         | top_k                                          | |
//	| stop                                | stop_sequences                                 | whitespace-only sequences dropped (the API refuses them) |
//	| user                                | metadata.user_id                               | |
//	| cache breakpoints (llm.Cache)       | cache_control {type ephemeral, ttl} on the block | on system blocks, tools, text/image/document, tool_use, tool_result and its content; ttl as it came ("" none); the last 4 in prompt order (llm.Request.CachePlan), the others counted in Usage.CacheDropped; a 1h after a 5m (or default) one in tools-system-messages order is made 5m (Anthropic: longer TTLs must come first) |
//	| n > 1                               | -                                              | 400: Anthropic serves one choice |
//	| logprobs: true                      | -                                              | 400; top_logprobs alone is dropped |
//	| response_format json_schema         | -                                              | 400: dropping it would break the client's contract silently |
//	| response_format json_object / text  | -                                              | dropped (the prompt asks for JSON, as OpenAI requires) |
//	| seed, frequency/presence_penalty, logit_bias, metadata, service_tier, store, prediction, modalities, audio, stream_options, other Extra | - | dropped |
//
// An untranslatable request is an Invalid *llm.Error with status 400, before anything is sent.
//
// # Stream translation
//
//	| Messages event                         | llm.Event                                                  |
//	|----------------------------------------|------------------------------------------------------------|
//	| message_start                          | EvStart {ID, Model}; usage kept                            |
//	| content_block_start text               | EvText if the block starts with text                       |
//	| content_block_start tool_use           | EvToolCall {Index: n-th tool call of the message, ID, Name, Args ""} |
//	| content_block_start thinking           | EvReasoning if it starts with text or a signature          |
//	| content_block_start redacted_thinking  | EvReasoning {Encrypted: data}, no text                     |
//	| text_delta                             | EvText                                                     |
//	| input_json_delta                       | EvToolCall {Index, Args: fragment}; empty fragments dropped |
//	| content_block_stop of a tool_use with no input fragment | EvToolCall {Args: "{}"} (a call without arguments, as OpenAI sends it) |
//	| thinking_delta                         | EvReasoning {Text, Field: "reasoning_content"}             |
//	| signature_delta                        | EvReasoning {Encrypted: signature, Field: "reasoning_content"} |
//	| message_delta                          | stop_reason kept; usage merged (cumulative: the last value of each field wins) |
//	| message_stop                           | EvUsage, then EvDone; then io.EOF (nothing after it is read) |
//	| ping, server tool blocks, citations, unknown events | nothing                           |
//	| error (event: error or type error)     | *llm.Error: rate_limit_error -> RateLimited; authentication/permission_error -> Auth (no upstream message); any other type (overloaded_error, api_error, even invalid_request_error) -> Unavailable, Type kept |
//
// Reasoning goes to Chat clients in reasoning_content (as DeepSeek and LiteLLM's Anthropic
// translation send it). A reasoning event with Encrypted closes a thinking block: the text
// since the previous one is its thinking and Encrypted its signature; with no text before it,
// Encrypted is a redacted_thinking block's data. That is how a later round rebuilds the
// blocks into llm.Reasoning to hand them back.
//
// Finish reasons: end_turn, stop_sequence, pause_turn -> stop; max_tokens,
// model_context_window_exceeded -> length; tool_use -> tool_calls; refusal -> content_filter
// (no refusal text: stop_details is not passed on); unknown -> stop.
//
// Usage: prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
// (OpenAI counts cached tokens inside prompt_tokens); CachedTokens = cache_read_input_tokens;
// CacheWriteTokens = cache_creation_input_tokens, CacheWrite1hTokens =
// cache_creation.ephemeral_1h_input_tokens (its 1h part); CompletionTokens = output_tokens
// (thinking included: Anthropic does not report it apart, so ReasoningTokens stays 0);
// CacheDropped = the request's breakpoints left out.
//
// A Messages client's own body (llm.Request.Native) goes as it came, its cache_control
// included, except that beyond 4 markers the earliest are removed (counted in CacheDropped)
// rather than have Anthropic refuse the request; only a body that names cache_control more
// than 4 times is decoded for that.
//
// Tool arguments cut by max_tokens are passed on as they came (invalid JSON) with finish
// length, never replaced by {}; a call cut before its first fragment has arguments "".
//
// Ends: io.EOF only after message_stop. A stream that ends without it, is cut inside an event,
// or whose last event lacks its blank line (even a message_stop) is Truncated. A canceled
// context is Canceled (or Timeout, by its cause), a closed stream Canceled.
package anthropic
