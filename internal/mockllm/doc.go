// Package mockllm is a scripted upstream that speaks the OpenAI Chat Completions wire format
// (POST .../chat/completions, streamed and not; GET .../models). It decides what a fake
// provider answers, and which fault it injects, from the request's model name alone, so tests,
// benchmarks, the demo and the gateway's built-in sim provider share one vocabulary of
// behaviours. Serve it over HTTP (cmd/mockllm, httptest) or in-process with
// Server.Transport.
//
// # Scripts
//
// The model name is the script:
//
//	model  = name [ "?" option { "&" option } ]
//	option = key "=" value            URL query encoding: %XX escapes, '+' is a space
//
// An unknown name, an unknown or repeated key, or a bad value answers 404 model_not_found in
// OpenAI's error shape, with the reason in the message. Calls, LastRequest and times= key on
// the exact model string, options included.
//
//	echo      the text of the last user message (a string, or its text parts joined by "\n")
//	text      len=64 bytes of generated English-like words (len=0 if say= is given alone)
//	reason    text after think=64 bytes of reasoning deltas
//	tools     tool calls (calls=1), finish_reason "tool_calls"
//	refuse    delta.refusal deltas, "I'm sorry, but I can't help with that." unless say=/len=
//	empty     no delta at all, finish_reason "stop"
//	replay    the bytes of file= from Options.FixturesDir, unchanged, one write per event
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
//	name=STR        tool name (default get_weather)
//	args=JSON       tool arguments (default {"location":"Paris, France","unit":"celsius"},
//	                the city changing per call)
//	split=N|a,b,..  argument fragments of N bytes (default 7), or cut at these byte offsets;
//	                the first fragment of each call carries id, type, name and arguments ""
//	finish=STR      finish_reason (default stop, or tool_calls when calls>0)
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
//	fail=STATUS     an HTTP error, STATUS 400..599, with OpenAI's body for it
//	                (429 rate_limit_exceeded, 401 invalid_api_key, 404 model_not_found, ...)
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
//
// Non-streamed requests get a chat.completion after first+delay×(frames-1); there, error and
// event answer 500, ratelimit 429, stall sends a 200 header and nothing, cut half the body.
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
//
// # Wire
//
// Streams are text/event-stream, one flushed "data: {json}\n\n" per event: a role chunk per
// choice ({"role":"assistant","content":""}), the deltas, one finish chunk per choice, the
// usage chunk if asked, "data: [DONE]". All chunks of a response share the id
// chatcmpl-mock-<n> (n counts the server's requests), object chat.completion.chunk, created and
// model (the request's model). Usage is a quarter of the bytes, rounded up: the prompt's text,
// and the answer's text, reasoning, tool names and arguments. Every wait selects on the
// request's context: a client that leaves ends the handler at once and counts in Canceled.
package mockllm
