// Package uistream speaks the Vercel AI SDK's UI message stream (protocol v1, DESIGN §8): it
// encodes a run's chunks as SSE frames, each with an id line, checked against one allow-list of
// chunk types and fields per protocol version of the `ai` npm package (v7 by default; v5 and
// v6 for clients that announce them), and it decodes the UIMessage history of a request into
// llm messages. Older clients validate chunks with strict schemas, where an unknown chunk type
// or field is fatal: the allow-list is what keeps every version's client alive.
//
// Decode checks a frontend's POST /v1/ui/chat body, its Chat Completions fields as package chat
// checks them, with the OpenAI-shaped field errors of package oai.
package uistream
