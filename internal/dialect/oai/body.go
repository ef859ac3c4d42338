// Package oai is what the OpenAI-shaped client wires (Chat Completions, Responses,
// embeddings, and the gateway's own admin and UI bodies) share: the strict decoding of a JSON
// body, the 400 of a bad field in OpenAI's words, and the OpenAI error body. It knows no
// route and no round: a dialect decodes with it and answers errors with it.
package oai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/jsonscan"
)

// Scan is the strict JSON decoding of every body the gateway models (/v1 and the
// admin API): it calls field for each member of the JSON object body, in order, and answers
// the OpenAI-format 400 for a body that is not exactly one JSON object: malformed JSON,
// invalid UTF-8 (RFC 8259 §8.1; encoding/json would silently turn it into U+FFFD), null or
// another non-object, a duplicate member, or anything after the object (a second object
// included).
func Scan(body []byte, field func(key string, raw json.RawMessage) error) error {
	if err := ValidUTF8(body); err != nil {
		return err
	}
	if members, ok := split(body); ok {
		return each(members, field)
	}
	return decode(body, field)
}

// decode is Scan over encoding/json's decoder, which words every syntax error.
func decode(body []byte, field func(key string, raw json.RawMessage) error) error {
	bad := func(err error) error {
		return Invalid("", "We could not parse the JSON body of your request: %s", JSONMsg(err))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return bad(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Invalid("", "The request body must be a JSON object.")
	}
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad(err)
		}
		if seen[key] {
			return Invalid(key, "Duplicate field '%s'.", key)
		}
		seen[key] = true
		if err := field(key, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Invalid("", "We could not parse the JSON body of your request: data after the top-level object")
	}
	return nil
}

// member is one member of a body split by split: its raw value is a view into the body.
type member struct {
	key string
	raw json.RawMessage
}

// split is Scan's fast path: it walks the whole body with jsonscan, which validates as
// encoding/json does, and returns its members, or false for anything it does not take on
// (malformed JSON, a key with escapes, nesting deeper than jsonscan walks), which the
// decoder then reads and words as before. It calls no field function, so a body it gives up
// on has changed nothing. The decoder's Token and Decode were half of decoding a request:
// they copy every value and allocate for every token.
func split(body []byte) ([]member, bool) {
	p := jsonscan.New(body)
	if p.Peek() != '{' {
		return nil, false
	}
	p.Advance()
	members := make([]member, 0, 8)
	for first := true; ; first = false {
		key, end, ok := p.Member(first)
		if !ok {
			return nil, false
		}
		if end {
			break
		}
		raw, ok := p.Value()
		if !ok {
			return nil, false
		}
		// Capped: an append to a member's value must not write over the body after it.
		members = append(members, member{key: string(key), raw: raw[:len(raw):len(raw)]})
	}
	p.WS()
	return members, p.Done()
}

// each calls field for the members in order, refusing a duplicate where the decoder would:
// after the members before it. A body of a few members is checked without a map; a map
// keeps a body of very many linear.
func each(members []member, field func(key string, raw json.RawMessage) error) error {
	var seen map[string]bool
	if len(members) > 16 {
		seen = make(map[string]bool, len(members))
	}
	for i, m := range members {
		dup := seen[m.key]
		if seen != nil {
			seen[m.key] = true
		} else {
			for _, prev := range members[:i] {
				dup = dup || prev.key == m.key
			}
		}
		if dup {
			return Invalid(m.key, "Duplicate field '%s'.", m.key)
		}
		if err := field(m.key, m.raw); err != nil {
			return err
		}
	}
	return nil
}

// Elements splits a JSON array into its elements as json.Unmarshal into a []json.RawMessage
// does (null gives none; anything else its error), without copying them: for a value Scan
// gave, the elements are views into the body, capped as its members are. What jsonscan
// does not take on (not an array, nesting deeper than it walks) goes to json.Unmarshal.
func Elements(raw []byte) ([]json.RawMessage, error) {
	p := jsonscan.New(raw)
	if p.Peek() == '[' {
		p.Advance()
		els := []json.RawMessage{} // not nil, as json.Unmarshal gives for []
		for first := true; ; first = false {
			end, ok := p.Element(first)
			if !ok {
				break
			}
			if end {
				if p.WS(); p.Done() {
					return els, nil
				}
				break
			}
			v, ok := p.Value()
			if !ok {
				break
			}
			els = append(els, v[:len(v):len(v)])
		}
	}
	var els []json.RawMessage
	err := json.Unmarshal(raw, &els)
	return els, err
}

// ValidUTF8 is the 400 of a body that is not UTF-8, naming the first bad byte.
func ValidUTF8(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	at := 0
	for at < len(body) {
		r, n := utf8.DecodeRune(body[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return Invalid("", "We could not parse the JSON body of your request: invalid UTF-8 (at byte %d)", at)
}

// JSONMsg says what is wrong with a JSON body, where encoding/json says it.
func JSONMsg(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of JSON input"
	}
	return err.Error()
}
