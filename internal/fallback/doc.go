// Package fallback decides which target serves a request: it walks the ordered chain of a
// model alias element by element (a target, or a weighted group of which one member is picked
// per request), starts an attempt, and commits to a target only at its first healthy event.
// Failures before commit fall back to the next element, after a retry on the same target when
// the target asks for retries; nothing has reached the client then. It also keeps the health
// of targets behind the Health interface: consecutive failures put a target in cooldown, it is
// skipped while others remain, and one half-open probe decides when it is back.
//
// Everything that happens to a request is recorded on its Run (one llm.Attempt per call), for
// the exhausted-chain error, the response headers and telemetry.
package fallback
