// Package relay owns one round of an answer: it reads the committed stream on the caller's
// goroutine, passes text through one redaction window per choice and kind, hands what the
// windows release to the sink, merges tool-call fragments by index and releases each call whole
// at the end of its choice, and returns the complete response of the round.
package relay
