// Package gemini is the adapter for the Gemini wire: streamGenerateContent?alt=sse of the
// Gemini API (generativelanguage.googleapis.com, kind gemini, x-goog-api-key) and of Google's
// models on Vertex AI (kind vertex, OAuth bearer tokens; VertexCredentials). It decides how
// an llm.Request becomes a generateContent body, how an answer before the stream maps to an
// *llm.Error kind, and how the SSE chunks become llm.Events, including when a stream is
// complete and when it was cut.
//
// The call is plain net/http through transport.HTTPClient; the SSE body is framed by
// internal/sse, which reports a cut last event as such.
//
// # Request translation
//
//	| Chat Completions                    | generateContent                                   | notes |
//	|-------------------------------------|---------------------------------------------------|-------|
//	| system / developer messages         | systemInstruction.parts [{text}]                  | in order |
//	| user text / image_url               | {text} / {inlineData {mimeType, data}} or {fileData {mimeType, fileUri}} | base64 data: URL inline; any other URL (https, gs://, Files API) as file data, media type from its extension (image/jpeg if none) |
//	| user file / audio parts             | {inlineData {mimeType, data}} / {fileData {mimeType, fileUri}} | bytes inline; a URL or a Files API file as file data; another provider's stored file: Unsupported 400 |
//	| assistant content, refusal          | {text} in a "model" turn                          | |
//	| assistant tool_calls                | {functionCall {id, name, args}}                   | ids the adapter made up (gemini_call_...) are not sent; arguments not a JSON object: 400 |
//	| assistant reasoning with Encrypted  | thoughtSignature on the part it came on           | ID = a tool call's id: that call's part; else the turn's first part (an empty one if none); thought text is not handed back; Wire gemini or "" only (an Anthropic or Responses signature: dropped) |
//	| cache breakpoints (llm.Cache)       | -                                                 | left out (Gemini caches implicitly); a Gemini client's cachedContent goes in its own body (Native), as it came |
//	| tool messages                       | {functionResponse {id, name, response}} in a user turn | name from the call it answers (400 if none); a JSON object result as it is, else {"result": text} |
//	| adjacent messages of one role       | one turn                                          | |
//	| tools                               | tools [{functionDeclarations [{name, description, parametersJsonSchema}]}] | the JSON Schema as it is |
//	| tool_choice auto / none / required  | toolConfig.functionCallingConfig.mode AUTO / NONE / ANY | |
//	| tool_choice {function: {name}}      | mode ANY, allowedFunctionNames [name]             | other object types: Unsupported 400 |
//	| max_tokens / max_completion_tokens  | generationConfig.maxOutputTokens                  | |
//	| temperature, top_p, stop, seed, n   | temperature, topP, stopSequences, seed, candidateCount | |
//	| top_k, presence_penalty, frequency_penalty (Extra) | topK, presencePenalty, frequencyPenalty | |
//	| reasoning_effort none, minimal / low / medium / high | thinkingConfig {thinkingBudget 0 / 1024 / 8192 / 24576, includeThoughts} | thoughts asked for whenever the budget is not 0 |
//	| response_format json_object / json_schema | responseMimeType application/json (+ responseJsonSchema) | |
//	| logprobs                            | -                                                 | Unsupported 400 |
//	| user, metadata, logit_bias, other Extra | -                                             | dropped |
//
// # Stream translation
//
//	| chunk                                     | llm.Event                                         |
//	|-------------------------------------------|---------------------------------------------------|
//	| the first chunk                           | EvStart {ID: responseId, Model: modelVersion}     |
//	| part text                                 | EvText {Choice: candidate index}                  |
//	| part text with thought: true              | EvReasoning {Text, Field: reasoning_content}      |
//	| part functionCall                         | EvToolCall {Index: n-th call of the choice, ID (or gemini_call_{responseId}_{choice}_{n}), Name, Args: the whole args, "{}" if none} |
//	| part thoughtSignature                     | EvReasoning {Encrypted: signature, ID: the call's id on a functionCall part, else ""} |
//	| usageMetadata                             | kept (cumulative); EvUsage before the finishes     |
//	| finishReason (every candidate), promptFeedback.blockReason | EvUsage, EvDone per choice, then io.EOF |
//	| {"error": {code, message, status}}        | *llm.Error: 429 / RESOURCE_EXHAUSTED -> RateLimited; 401, 403 -> Auth (no upstream message); else Unavailable, Type = status |
//
// Finish reasons: STOP -> stop, or tool_calls when the choice called a function; MAX_TOKENS
// -> length; SAFETY, RECITATION, PROHIBITED_CONTENT, BLOCKLIST, SPII, IMAGE_SAFETY ->
// content_filter; a blocked prompt (promptFeedback.blockReason, no candidates) ->
// content_filter; others -> stop.
//
// Usage: prompt_tokens = promptTokenCount (cached included, as OpenAI counts them) +
// toolUsePromptTokenCount; CachedTokens = cachedContentTokenCount; completion_tokens =
// candidatesTokenCount + thoughtsTokenCount; ReasoningTokens = thoughtsTokenCount.
//
// Errors before the stream: 400 with API_KEY_INVALID, 401, 403 -> Auth; other 400, 404,
// 413, 422 -> Invalid with the upstream's message; 429 -> RateLimited, RetryAfter from
// Retry-After or the RetryInfo detail; others -> Unavailable.
//
// Ends: io.EOF once every candidate finished (what follows is drained), or at a clean end of
// the body after at least one finish. A body that ends before, or inside an event (even a
// finishing one without its blank line), is Truncated.
package gemini
