package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// RedactJSON masks secrets inside the string values and keys of a JSON document (tool-call
// arguments), keeping the rest byte for byte so the document stays valid and diffs stay
// small. Each string is redacted on its own, decoded, so an escaped secret ("sk\u002d...") is
// found too. Text that is not valid JSON is redacted as plain text.
func (r *Rules) RedactJSON(raw string) string {
	if r == nil {
		return raw
	}
	if !json.Valid([]byte(raw)) {
		return r.Redact(raw)
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		j := i + 1
		for raw[j] != '"' {
			if raw[j] == '\\' {
				j++
			}
			j++
		}
		// raw[i:j+1] is one string literal: valid JSON cannot be anywhere else in a string.
		var s string
		if err := json.Unmarshal([]byte(raw[i:j+1]), &s); err == nil {
			if red := r.Redact(s); red != s {
				b.WriteString(raw[last:i])
				b.Write(encodeString(red))
				last = j + 1
			}
		}
		i = j
	}
	if last == 0 {
		return raw
	}
	b.WriteString(raw[last:])
	return b.String()
}

func encodeString(s string) []byte {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
