// Package anthropic holds the wire types of the Anthropic Messages API (POST /v1/messages):
// the request with its content blocks, the Message answer, the events of its stream
// (message_start, content_block_start/delta/stop, message_delta, message_stop, ping,
// error), usage with its cache tokens, and errors. It decides nothing: the types are plain
// data whose field order is the order the API writes its members, shared by the adapter
// (which writes requests), the mock upstream (which reads requests and writes answers) and
// a client-facing Messages dialect (which does both). It uses the standard library only and
// imports nothing of the module (internal/archtest holds it to that).
//
// Members a gateway must pass on without understanding them (cache_control, a tool's input
// and input_schema) are raw JSON, so they go out byte for byte as they came.
//
// https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/docs/build-with-claude/streaming
package anthropic
