// Package fallback decides which target serves a request: it walks the ordered chain of a
// model alias, starts an attempt, and commits to a target only at its first healthy event.
// Failures before commit fall back to the next target; nothing has reached the client then.
package fallback
