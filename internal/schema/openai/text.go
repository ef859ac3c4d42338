package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Text is a text member as a reader takes it (a delta's content, refusal or reasoning, a
// tool call's arguments, a finish reason): a JSON string on OpenAI's wire, for which
// compatible servers also send null (decoded as "") and an array of content parts (their
// "text" members joined). Unmarshal hands it the raw bytes uncopied, so a plain string costs
// one allocation. It encodes as a plain JSON string.
type Text string

// UnmarshalJSON implements json.Unmarshaler; anything but a string or an array of parts is
// no text.
func (t *Text) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"':
		if s, ok := Plain(b); ok {
			*t = Text(s)
			return nil
		}
		return json.Unmarshal(b, (*string)(t))
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s string
		for _, p := range parts {
			s += p.Text
		}
		*t = Text(s)
	}
	return nil // null, and anything else: no text
}

// Plain returns the text of the JSON string b (quotes included) when it has no escape and
// is valid UTF-8: the bytes encoding/json would decode it to; false otherwise.
func Plain(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' {
		return nil, false
	}
	s := b[1 : len(b)-1]
	return s, bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s)
}

// Raw is json.RawMessage without null, for members a reader passes on unread (logprobs, an
// in-stream error): null leaves it nil instead of costing a copy of "null" per chunk.
// Otherwise it holds its own copy of the bytes. It is for readers: a writer uses
// json.RawMessage, which encodes as the bytes it holds.
type Raw []byte

// UnmarshalJSON implements json.Unmarshaler.
func (r *Raw) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		*r = append(Raw(nil), b...)
	}
	return nil
}
