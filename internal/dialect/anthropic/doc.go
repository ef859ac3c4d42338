// Package anthropic is the Anthropic Messages API as a client-facing wire
// (POST /v1/messages, /v1/messages/count_tokens): it decodes and validates a Messages body
// into an llm.Request, whose Native keeps the body as the client wrote it for Anthropic
// targets, and writes the answer back as Anthropic does, streamed (message_start,
// content_block_start/delta/stop, message_delta, message_stop; event: error after commit) or
// as one Message, and errors in Anthropic's shape and statuses. It knows no route and no
// round: the server runs the round and hands its events to the Wire.
//
// https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/docs/build-with-claude/streaming
package anthropic
