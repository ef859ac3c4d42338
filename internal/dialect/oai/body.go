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
)

// Scan is the strict JSON decoding of every body the gateway models (/v1 and the
// admin API): it calls field for each member of the JSON object body, in order, and answers
// the OpenAI-format 400 for a body that is not exactly one JSON object: malformed JSON,
// invalid UTF-8 (RFC 8259 §8.1; encoding/json would silently turn it into U+FFFD), null or
// another non-object, a duplicate member, or anything after the object (a second object
// included).
func Scan(body []byte, field func(key string, raw json.RawMessage) error) error {
	bad := func(err error) error {
		return Invalid("", "We could not parse the JSON body of your request: %s", JSONMsg(err))
	}
	if err := ValidUTF8(body); err != nil {
		return err
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
