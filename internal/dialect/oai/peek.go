package oai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/jsonscan"
)

// Peeked is what the gate reads of a body before the handler decodes it: the members every
// wire of the gateway names alike (Chat, Responses, Anthropic Messages, UI runs).
type Peeked struct {
	Model     string
	MaxTokens int64 // max_completion_tokens, max_tokens or max_output_tokens; 0: not given
	N         int64
}

// Peek reads the top-level members the gate needs. Members are matched exactly, as the
// handlers match them (encoding/json alone would also take "MODEL" for "model", and let a
// body name one model to the gate and another to the handler). The body is walked without
// decoding it (the handler decodes it next); a body with escapes or non-ASCII bytes in a
// member's name goes to encoding/json, which unescapes them.
func Peek(body []byte) Peeked {
	var m struct{ model, maxc, max, maxo, n []byte }
	s := jsonscan.New(body)
	if s.Peek() != '{' {
		return peekSlow(body)
	}
	s.Advance()
	for first := true; ; first = false {
		k, end, ok := s.Member(first)
		if !ok {
			return peekSlow(body)
		}
		if end {
			break
		}
		v, ok := s.Value()
		if !ok {
			return peekSlow(body)
		}
		switch string(k) { // the last of duplicate members wins, as in a map
		case "model":
			m.model = v
		case "max_completion_tokens":
			m.maxc = v
		case "max_tokens":
			m.max = v
		case "max_output_tokens":
			m.maxo = v
		case "n":
			m.n = v
		}
	}
	if s.WS(); !s.Done() {
		return peekSlow(body)
	}
	return peekValues(m.model, [3][]byte{m.maxc, m.max, m.maxo}, m.n)
}

// peekSlow is Peek through encoding/json, for the bodies Peek leaves to it.
func peekSlow(body []byte) Peeked {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return Peeked{}
	}
	return peekValues(m["model"], [3][]byte{m["max_completion_tokens"], m["max_tokens"], m["max_output_tokens"]}, m["n"])
}

// peekValues decodes the members Peek found (nil: absent); a value of the wrong type is
// ignored.
func peekValues(model []byte, maxTokens [3][]byte, n []byte) Peeked {
	var p Peeked
	if len(model) > 1 && model[0] == '"' && bytes.IndexByte(model, '\\') < 0 && utf8.Valid(model) {
		p.Model = string(model[1 : len(model)-1])
	} else if model != nil {
		_ = json.Unmarshal(model, &p.Model)
	}
	for _, v := range maxTokens {
		if v != nil && json.Unmarshal(v, &p.MaxTokens) == nil && p.MaxTokens > 0 {
			break
		}
	}
	if n != nil {
		_ = json.Unmarshal(n, &p.N)
	}
	return p
}
