// Package redact decides which spans of model text are secrets and replaces each with a typed
// mask such as [REDACTED:openai_key], both on a complete text (Rules.Redact) and on a stream of
// pieces (Window), with the same result for every split of the text into pieces.
//
// A Window follows the golang.org/x/text/transform contract: it holds back only what is still
// undecided and releases the rest. Every decision (does a match open here, where does it end)
// is a function of the text alone: a detector either decides from the bytes it has seen or says
// it needs more, and it never decides differently once more bytes arrive. Redact(t) is by
// definition the same algorithm run on t as one piece followed by the end of input, so the
// concatenation of everything a Window releases equals Redact of the whole text (DESIGN §4).
//
// What is held, and for how long:
//   - words: the current whitespace-free run is held until whitespace ends it, so a quoted
//     token is masked whole and a reader gets whole words;
//   - a candidate opened by a literal prefix (sk-, AKIA, ghp_, eyJ, Bearer, -----BEGIN, a
//     label such as aws_secret_access_key, the first digit group of a card number ...) is held
//     until it resolves or reaches MaxMatchBytes, where it is masked whole;
//   - a run without whitespace and without an open candidate (Chinese, Japanese) is released
//     at every MaxRunBytes (newlines are whitespace);
//   - operator regexes without a literal prefix hold back a fixed WindowBytes.
//
// The gateway's own secrets (Config.Secrets, KeyHashes, KeyPrefix; secrets.go) are matched
// exactly, whatever Detectors says, and win at an offset; a mask another detector opens
// earlier is widened over one that starts inside it.
//
// Rules are immutable and safe for concurrent use; a Window belongs to one stream.
// Standard library only.
package redact
