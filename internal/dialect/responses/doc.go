// Package responses is the OpenAI Responses client wire (POST /v1/responses), a codec shaped
// like uistream: Decode validates a body into an llm.Request (input items, tools, text format,
// reasoning) and keeps what the Response object echoes; a Wire writes one request's answer
// (the Responses stream events to an sse.Writer, with sequence numbers, the error event and
// response.failed, or the Response object of a non-streamed answer). Which targets may serve
// a previous_response_id is the server's to decide: it knows the chain.
package responses
