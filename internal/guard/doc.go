// Package guard decides whether a request may go to a provider and whether a round's
// complete answer may reach the client: the guardrails named in the configuration
// (guardrails:) and attached to model aliases and keys (DESIGN §6).
//
// An input guardrail judges the decoded request before any provider is called: blocked
// terms, a regex, personal data (PII) or the prompt's size; it blocks the request, or masks
// what it found before the request is sent. An output guardrail judges the complete response
// of a round, streamed or not: blocked terms, a regex, PII, the answer's size, and JSON
// validity or a JSON Schema when the request's response_format asks for JSON (or the
// guardrail names its own schema). Whether the round is held until the verdict (mode hold)
// or streamed as it comes (mode stream) is the server's to apply; this package only judges.
//
// A verdict never quotes the text it judged: a refusal names the guardrail and what kind of
// rule failed, so a refused answer cannot leak through its own error message.
//
// Guardrails are immutable once built and safe for concurrent use.
package guard
