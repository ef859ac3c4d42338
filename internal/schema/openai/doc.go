// Package openai holds the wire types of the OpenAI APIs the gateway speaks: Chat
// Completions (request, completion, chunk, tool calls, usage, errors), Responses (request,
// response object, output items, stream events) and embeddings. It decides nothing: the
// types are plain data whose field order is the order OpenAI writes its members, so that a
// writer (the mock upstream, a client-facing dialect) encodes them as the API does, and a
// reader decodes them. It uses the standard library only and imports nothing of the module
// (internal/archtest holds it to that), so the adapter, the dialects and the mock can all
// share it.
//
// Readers on a hot path (the adapter's chunk decoder) keep their own projections of these
// objects, holding only the members they read; they build them from the leaf types here
// (Text, Raw, Usage, Error) rather than declaring the wire again.
package openai
