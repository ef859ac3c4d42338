// Package chat is the OpenAI Chat Completions client wire (POST /v1/chat/completions), a codec
// shaped like uistream: Decode validates a body into an llm.Request, a Wire writes one
// request's answer (the chunks of a committed stream to an sse.Writer, the usage chunk and
// [DONE], the in-band error frame, or the chat.completion body of a non-streamed answer). It
// never picks a target or runs a round: the server does, with any wire.
package chat
