// Package bedrock is the adapter for the Amazon Bedrock Runtime ConverseStream API (POST
// /model/{modelId}/converse-stream: one wire for every model family on Bedrock). It decides
// how an llm.Request becomes a Converse body, how an answer before the stream maps to an
// *llm.Error kind, and how the event-stream frames become llm.Events, including when a
// stream is complete and when it was cut.
//
// The call is plain net/http through transport.HTTPClient, not the SDK's bedrockruntime
// client: the gateway's dialer bounds the connect by the attempt's timeout, its pool is
// shared, canceling the attempt's context closes the body, and retries stay the chain's (the
// SDK client retries by default and hides the frames behind a channel and a goroutine). From
// the SDK come what must not be written by hand: the SigV4 signer (service "bedrock"), the
// default credential chain (LoadCredentials: environment, shared files and profiles, web
// identity, container and instance metadata; cached and refreshed by the SDK) and the
// event-stream decoder, which checks both CRCs of every frame. The SDK's own stream reader
// takes io.ErrUnexpectedEOF for a clean end; this one does not (see Ends). A Bedrock API
// key (Config.APIKey) goes as a bearer token instead of a signature.
//
// The gateway's plain endpoint rerank (Plain, issue 48) is served with the Rerank API of
// the Agents for Amazon Bedrock Runtime (POST /rerank), signed the same way; its wire is in
// rerank.go. Embeddings and image generation go through InvokeModel (embed.go, image.go).
//
// # Request translation
//
//	| Chat Completions                    | Converse                                        | notes |
//	|-------------------------------------|-------------------------------------------------|-------|
//	| system / developer messages         | system [{text}]                                 | in order |
//	| user text                           | {text}                                          | empty text dropped (Converse refuses it) |
//	| user image_url                      | {image: {format, source: {bytes}}}              | base64 data: URL (png, jpeg, gif, webp); s3:// -> source.s3Location; http(s) URL: Unsupported 400 (Converse fetches none) |
//	| user file parts                     | {document: {format, name, source: {bytes}}}     | pdf, csv, doc, docx, xls, xlsx, html, txt, md; s3:// -> source.s3Location; name without extension or dots; http(s) URL, stored files, other types: Unsupported 400 |
//	| user audio parts                    | {audio: {format, source: {bytes}}}              | mp3, wav, flac, ogg, aac, opus, webm, mp4, m4a, ...; others: Unsupported 400 |
//	| assistant content, refusal          | {text}                                          | |
//	| assistant tool_calls                | {toolUse: {toolUseId, name, input}}             | "" -> {}; not a JSON object: 400 |
//	| assistant reasoning (llm.Reasoning) | {reasoningContent: {reasoningText: {text, signature}}} first | Redacted (or Wire "" and no text) -> redactedContent (Encrypted's base64 bytes); Wire bedrock, anthropic or "" only (Gemini and Responses signatures, and reasoning without one: dropped) |
//	| tool messages                       | {toolResult: {toolUseId, content: [{text}]}} in a user turn | consecutive results merged into one turn |
//	| adjacent messages of one role       | one turn                                        | Converse requires alternation; empty messages dropped |
//	| tool call ids                       | same ids                                        | characters outside [a-zA-Z0-9_-] become "_" |
//	| tools                               | toolConfig.tools [{toolSpec: {name, description, inputSchema: {json}}}] | no parameters -> {"type":"object","properties":{}}; strict dropped |
//	| cache breakpoints (llm.Cache)       | {cachePoint: {type: default, ttl}} right after the marked block | see Prompt caching |
//	| tool_choice auto / required         | toolChoice {auto: {}} / {any: {}}               | |
//	| tool_choice {function: {name}}      | toolChoice {tool: {name}}                       | other object types: Unsupported 400 |
//	| tool_choice none                    | no toolConfig                                   | Converse has no "none"; if the history holds tool blocks (which need a toolConfig) the tools stay, with auto |
//	| max_tokens / max_completion_tokens  | inferenceConfig.maxTokens                       | neither: the model's default |
//	| temperature, top_p, stop            | inferenceConfig.temperature (clamped to 1), topP, stopSequences | whitespace-only stop sequences dropped |
//	| ThinkingBudget (the client's budget_tokens / thinkingBudget) | additionalModelRequestFields.thinking {type: enabled, budget_tokens} | over reasoning_effort, at least 1024; 0 off, -1 the effort's; the same rules as reasoning_effort's below |
//	| reasoning_effort low/medium/high    | additionalModelRequestFields.thinking {type: enabled, budget_tokens 1024/4096/16384} | Claude models only (ids with "anthropic.claude", inference profiles included), as the Anthropic adapter does: the client's limit holds (budget < limit, none under 1024), else maxTokens = budget + 8192; temperature dropped, top_p below 0.95 dropped; a forced tool_choice turns it off |
//	| top_k (Extra)                       | additionalModelRequestFields.top_k              | Claude models only; not with thinking |
//	| n > 1, logprobs                     | -                                               | Unsupported 400: the chain tries another target |
//	| response_format json_schema         | -                                               | Unsupported 400 |
//	| response_format json_object / text, seed, penalties, user, metadata, other Extra | - | dropped |
//
// # Stream translation
//
//	| frame (:message-type / :event-type)      | llm.Event                                             |
//	|------------------------------------------|-------------------------------------------------------|
//	| event messageStart                       | EvStart {ID: x-amzn-requestid, Model: the model id}  |
//	| event contentBlockStart toolUse          | EvToolCall {Index: n-th tool use, ID, Name, Args ""} |
//	| event contentBlockDelta text             | EvText                                                |
//	| event contentBlockDelta toolUse.input    | EvToolCall {Index, Args: fragment}; "" dropped        |
//	| event contentBlockStop of a tool use with no fragment | EvToolCall {Args: "{}"}                  |
//	| event contentBlockDelta reasoningContent | text -> EvReasoning {Text, Field: reasoning_content}; signature -> EvReasoning {Encrypted}; redactedContent -> EvReasoning {Encrypted: base64}, no text (an llm.Event names no wire: handed back, such a block has Wire "", which this adapter reads) |
//	| event messageStop                        | stopReason kept                                       |
//	| event metadata                           | usage kept; with messageStop (either order): EvUsage, EvDone, then io.EOF |
//	| event of another type, the "p" padding   | nothing                                               |
//	| exception throttlingException            | RateLimited *llm.Error                                |
//	| exception internalServerException, modelStreamErrorException, serviceUnavailableException, validationException, other | Unavailable *llm.Error, Type = the exception type (validationException too: a request Bedrock refuses up front is an HTTP 400, Invalid) |
//	| error frame (:error-code)                | Unavailable *llm.Error                                |
//
// Finish reasons: end_turn, stop_sequence, malformed_model_output, malformed_tool_use ->
// stop; max_tokens, model_context_window_exceeded -> length; tool_use -> tool_calls;
// guardrail_intervened, content_filtered -> content_filter.
//
// Usage: prompt_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens (as for
// Anthropic: OpenAI counts cached tokens inside prompt_tokens); CachedTokens =
// cacheReadInputTokens; CacheWriteTokens = cacheWriteInputTokens; CacheWrite1hTokens = the
// cacheDetails entries of ttl 1h; CompletionTokens = outputTokens (reasoning included;
// Bedrock does not report it apart); CacheDropped = the client's breakpoints the request
// left out (Prompt caching).
//
// # Prompt caching (issue 46)
//
// Each block the client marked (an Anthropic cache_control, a Bedrock cachePoint, an alias's
// prompt_cache: auto) is followed by a cachePoint block: a system text block, a tool spec,
// a text, image or document part, a toolUse (ToolCall.Cache), a toolResult (the tool
// message's Cache, or one of its parts': the result is one block, so two marks on it make
// one point). Bedrock takes at most 4 (llm.MaxCacheMarks): the last 4 in prompt order are
// kept, the one on the conversation included. Claude models (anthropic.claude) take them in
// system, tools and messages; the ttl (5m, 1h) only from Claude 4.5 on, and never longer
// than an earlier point's (tools, then system, then messages: Bedrock refuses a longer one
// after a shorter one, so such a point goes as 5m: llm.Request.CachePlan). Nova models (amazon.nova)
// take them in system and messages, without ttl; other models refuse cachePoint and get
// none. What is left out (over the limit, a kind of block the model cannot cache, a mark on
// a block not sent) is counted in Usage.CacheDropped, never a 400. Config.CachePoints adds
// points after the system prompt and the tools only when the client marked nothing.
//
// Errors before the stream: 400, 404, 413, 422 (ValidationException, ResourceNotFound) ->
// Invalid with the upstream's message; 401, 403 (AccessDenied, UnrecognizedClient,
// InvalidSignature) -> Auth, without it; 429 Throttling, ServiceQuotaExceeded ->
// RateLimited; 408, 424, 429 ModelNotReady, 5xx -> Unavailable. The type comes from
// X-Amzn-ErrorType or "__type". Credentials that cannot be had are Auth, and nothing is sent.
//
// Ends: io.EOF only after messageStop, with its metadata or at a clean end of the body
// between frames (usage then left to the gateway's estimate). A body that ends before
// messageStop, or inside a frame (its prelude, its payload, its CRC), is Truncated; a frame
// over 16 MiB, or whose CRC fails, is Unavailable. A canceled context is Canceled (or
// Timeout, by its cause), a closed stream Canceled.
package bedrock
