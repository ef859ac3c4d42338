// Package gemini is the Gemini API as a client-facing wire (POST
// /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens, and the same
// under /v1): it splits the model and the method from the path, decodes and validates a
// GenerateContentRequest into an llm.Request, and writes the answer back as Google does:
// GenerateContentResponse chunks, as SSE events with ?alt=sse or else as one JSON array
// written element by element, one GenerateContentResponse for generateContent, and errors
// in Google's shape ({"error":{"code","message","status"}}) and statuses. It knows no route
// and no round: the server runs the round and hands its events to the Wire.
//
// A failure after the stream started is what Google sends then: one more element, an error
// body ({"error":{...}}) instead of a GenerateContentResponse, after which the stream ends
// (as an SSE event, or as the array's last element).
//
// https://ai.google.dev/api/generate-content, https://ai.google.dev/api/tokens.
package gemini
