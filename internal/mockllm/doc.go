// Package mockllm is a scripted upstream that speaks the wire formats the gateway calls:
// OpenAI Chat Completions (POST .../chat/completions), Anthropic Messages (POST
// .../messages), OpenAI Responses (POST .../responses), the Gemini API (POST
// .../models/{model}:generateContent and :streamGenerateContent?alt=sse), each streamed and
// not, and OpenAI
// embeddings (POST .../embeddings); GET .../models lists the scripts. It decides what a fake
// provider answers, and which fault it injects, from the request's model name alone, so
// tests, benchmarks, the demo and the gateway's built-in sim provider share one vocabulary of
// behaviours whatever the dialect. Serve it over HTTP (cmd/mockllm, httptest) or in-process
// with Server.Transport, which serves every path.
//
// # Scripts
//
// The model name is the script:
//
//	model  = name [ "?" option { "&" option } ]
//	option = key "=" value            URL query encoding: %XX escapes, '+' is a space
//
// An unknown name, an unknown or repeated key, or a bad value answers 404 model_not_found in
// the endpoint's error shape, with the reason in the message. Calls, LastRequest and times=
// key on the exact model string, options included, on every endpoint.
//
//	echo      the text of the last user message (a string, or its text parts joined by "\n")
//	text      len=64 bytes of generated English-like words (len=0 if say= is given alone)
//	reason    text after think=64 bytes of reasoning deltas
//	tools     tool calls (calls=1), finish_reason "tool_calls"
//	refuse    delta.refusal deltas, "I'm sorry, but I can't help with that." unless say=/len=
//	empty     no delta at all, finish_reason "stop"
//	replay    the bytes of file= from Options.FixturesDir, unchanged, one write per event
//	          (on any endpoint: the file is the wire)
//	embed     embeddings only: one unit vector of dims= floats (default: the request's
//	          dimensions, else 8) per input, a function of the input text and seed=; the
//	          other scripts answer 404 on .../embeddings and embed 404 elsewhere
//
// Content options (all scripts but replay; echo takes none of len, say, at, seed):
//
//	len=N           bytes of generated text (deterministic for a seed; exactly N bytes)
//	say=STR         a literal inserted into the text at byte at= (default len/2)
//	seed=N          generator seed (default 1); choice i uses seed+i
//	chunk=N|Nw      at most N bytes per delta (never inside a rune), or N words (default 1w;
//	                a word carries its leading space, like a token); 0: one delta
//	n=N             choices (default: the request's n, else 1), interleaved round robin
//	think=N         bytes of reasoning deltas before the text
//	field=F         reasoning_content (default, DeepSeek/vLLM) or reasoning (Groq/OpenRouter)
//	logprobs=1      choices[].logprobs on every content delta (made-up, deterministic values)
//	calls=N         tool calls after the text, one after another (parallel tool calls)
//	name=STR        tool name (default get_weather); a,b names the calls in turn
//	then=text|echo  once the last message is a tool result: text (len, default 64) or
//	                "The tool answered: " and the result, with no call
//	args=JSON       tool arguments (default {"location":"Paris, France","unit":"celsius"},
//	                the city changing per call)
//	split=N|a,b,..  argument fragments of N bytes (default 7), or cut at these byte offsets;
//	                the first fragment of each call carries id, type, name and arguments ""
//	finish=STR      finish_reason (default stop, or tool_calls when calls>0, or length
//	                when max= cut the answer)
//	max=N           the answer stops after N tokens (4N bytes) of reasoning, text and tool
//	                arguments, in that order, even inside the arguments' JSON
//	role=0          no role chunk
//	usage=auto|always|never  the usage chunk (choices: []): auto sends it when the request
//	                has stream_options.include_usage; every chunk then carries "usage":null
//	end=done|nodone|nofinish nodone: no [DONE] after the finish (and usage) chunks; nofinish:
//	                the stream ends after the last delta, without finish, usage or [DONE]
//
// Timing and fault options (all scripts):
//
//	wait=DUR        before the response headers (any answer, errors included)
//	first=DUR       after the headers and role chunks, before the first delta (replay: event)
//	delay=DUR       before every later frame (finish, usage and [DONE] included)
//	flush=end       the stream is flushed once, at its end, as an upstream behind a
//	                buffering proxy sends it: the same bytes, many events per read
//	                (default flush=event: every frame as it is written)
//	fail=STATUS     an HTTP error, STATUS 400..599, with OpenAI's body for it (429
//	                rate_limit_exceeded, 401 invalid_api_key, 404 model_not_found, ...),
//	                or Anthropic's on .../messages (529 overloaded_error, ...)
//	fail=error      a data-only {"error":{...server_error}} event, then [DONE]
//	fail=ratelimit  the same with code rate_limit_exceeded, type requests
//	fail=event      "event: error" + data {"error":...}, no [DONE] (Groq's shape)
//	fail=stall      nothing more until the client leaves
//	fail=cut        half of the next event's line, no blank line, then a clean end of body
//	fail=abort      the connection is cut (http.ErrAbortHandler): the body ends in an error
//	after=N         frames written after the preamble before the in-stream fault (default 0:
//	                right after the role chunks); clamped to the last frame, so a large N
//	                puts the fault in place of [DONE]
//	times=N         the fault hits only the first N calls of this model; later ones succeed
//	retry=S         Retry-After seconds of an HTTP error (default 1 on 429; 0: none)
//	code=, type=, msg=  override the error's code, type and message
//	quote=all|masked  the error's message (any fault above) quotes the request's headers and
//	                query, as upstreams and proxies that echo credentials do: whole (all), or
//	                as OpenAI quotes a key, its first 12 and last 4 characters (masked)
//	errshape=nested|flat  the Responses error event: error fields under "error" (default,
//	                what the API sends) or code and message at the top level (openai-go's
//	                ResponseErrorEvent)
//
// Non-streamed requests get the whole answer after first+delay×(frames-1); there, error and
// event answer 500 (Anthropic: 529 overloaded_error), ratelimit 429, stall sends a 200
// header and nothing, cut half the body.
//
// Examples:
//
//	text?len=200&chunk=5&delay=10ms&first=100ms
//	text?say=sk-secret-123&len=100&at=40&chunk=3
//	reason?think=80&field=reasoning
//	tools?calls=2&split=1,5,9
//	text?len=40&fail=error&after=3
//	echo?fail=429&retry=7&times=1
//	replay?file=openai-chat-text.sse&delay=5ms
//	text?fail=error                       Anthropic: overloaded_error after message_start
//	text?len=40&fail=error&errshape=flat  Responses: a flat error event, response.failed
//	embed?dims=16&fail=429&times=1
//
// # Dialects
//
// One answer is generated per request and written by the endpoint's dialect; the options
// mean the same on every endpoint, except the Chat-only n=, field=, logprobs=, role= and
// usage= (Anthropic and Responses answer one choice and always report usage), and errshape=
// (Responses only). after= counts the frames after each dialect's preamble.
//
//   - Anthropic Messages (x-api-key or Authorization and anthropic-version are required;
//     so are model, messages and max_tokens): message_start (the preamble), then per
//     content block (thinking with thinking_delta and signature_delta, text, tool_use with
//     an empty first input_json_delta) content_block_start, deltas and content_block_stop,
//     a ping after the first block's start, message_delta (stop_reason: end_turn,
//     max_tokens, tool_use, refusal, or finish= as given; cumulative usage), message_stop.
//     Errors are {"type":"error","error":{"type":...,"message":...}} with the API's status
//     per type (529 overloaded_error, 500 api_error, 429 rate_limit_error + Retry-After,
//     ...); fail=error and event write an overloaded_error error event (ratelimit:
//     rate_limit_error) and end the stream. end=nodone drops message_stop; end=nofinish
//     drops message_delta and message_stop. POST .../messages/count_tokens answers
//     {"input_tokens":N}, the prompt's tokens as the usage counts them (no script runs;
//     max_tokens and stream are refused, as the API refuses them).
//   - OpenAI Responses: response.created and response.in_progress (the preamble), then per
//     output item (reasoning with summary deltas, the message's output_text or refusal,
//     one function_call per tool call) added, part, delta, done events, then
//     response.completed, or response.incomplete when finish= is length or content_filter;
//     every event carries sequence_number. fail=error writes the error event then
//     response.failed (only the error event with end=nodone); fail=event writes
//     response.failed alone. end=nodone drops the terminal event; end=nofinish ends after
//     the last delta. Errors and non-streamed answers are OpenAI's.
//   - Gemini API (x-goog-api-key, ?key= or Authorization is required; so are contents): the
//     model is the path's (escaped as Google's clients escape it). No preamble: a
//     GenerateContentResponse per reasoning delta (thought parts) and text delta, the calls
//     whole in one chunk (the first with a made-up thoughtSignature), finishReason (STOP,
//     MAX_TOKENS, SAFETY for a refusal) and usageMetadata on the last chunk; events end in
//     CRLF CRLF as Google's do. then= reads the last turn's functionResponse (its one string
//     member, else its JSON). Errors are {"error":{"code","message","status"}}; fail=error
//     and event write such an error as the next event and end the stream (503 UNAVAILABLE,
//     ratelimit 429 RESOURCE_EXHAUSTED). Streams are served with alt=sse only (the gateway's
//     adapter asks for it); without it the answer is a 400. end=nodone is end=done.
//   - Embeddings: input as a string, strings, or token arrays; encoding_format float or
//     base64; usage.prompt_tokens. Never streamed: the HTTP faults, stall, cut and abort
//     apply.
//
// # Chat wire
//
// Streams are text/event-stream, one flushed "data: {json}\n\n" per event: a role chunk per
// choice ({"role":"assistant","content":""}), the deltas, one finish chunk per choice, the
// usage chunk if asked, "data: [DONE]". All chunks of a response share the id
// chatcmpl-mock-<n> (n counts the server's requests), object chat.completion.chunk, created and
// model (the request's model). Usage is a quarter of the bytes, rounded up: the prompt's text,
// and the answer's text, reasoning, tool names and arguments. Every wait selects on the
// request's context: a client that leaves ends the handler at once and counts in Canceled.
package mockllm
