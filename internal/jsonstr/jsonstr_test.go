package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x1f\n\r\t\b\f", "é中\u2028\u2029", "bad\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := Append(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("Append(%q) = %s: not JSON: %v", s, b, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD, as encoding/json does
		}
		if got != want {
			t.Fatalf("round trip of %q: got %q, want %q", s, got, want)
		}
		// Byte for byte what encoding/json writes without HTML escaping, so that a hand-written
		// body and one encoding/json writes are the same bytes.
		var ref bytes.Buffer
		enc := json.NewEncoder(&ref)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if w := bytes.TrimSuffix(ref.Bytes(), []byte("\n")); !bytes.Equal(b, w) {
			t.Fatalf("Append(%q) = %s, encoding/json writes %s", s, b, w)
		}
	})
}
