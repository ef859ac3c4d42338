// Package jsonstr appends Go strings as JSON string literals, the one piece of JSON encoding
// on the hot paths (the upstream request body, every client chunk, the chat.completion body)
// written by hand: one pass, no reflection, no allocation beyond the caller's buffer. It
// writes what encoding/json writes without HTML escaping, byte for byte (FuzzAppend): quotes,
// backslashes and control characters escaped (\n, \r, \t, \b, \f, else \u00XX), invalid UTF-8
// replaced by U+FFFD, U+2028 and U+2029 escaped so a line stays one line in every JavaScript
// parser, and "<" and "&" as they are (as OpenAI writes them).
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// Append appends s to b as a JSON string literal.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
