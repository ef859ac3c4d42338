package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// valid is encoding/json's verdict through the scanner: one value, whitespace around it.
func valid(b []byte) (ok, decided bool) {
	s := New(b)
	s.WS()
	if _, ok := s.Value(); !ok {
		// Nesting deeper than the scanner walks is not a verdict.
		return false, strings.Count(string(b), "[")+strings.Count(string(b), "{") <= maxSkipDepth
	}
	s.WS()
	return s.Done(), true
}

// Value accepts exactly the texts encoding/json accepts, whatever the bytes.
func FuzzValue(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"]}`, `"\ud800"`, "\"\xff\"", `01`, `-`, `1.`, `1e`,
		`{"a" 1}`, `{"a":1,}`, `[1,]`, `"\x"`, "\"\x01\"", `nul`, ` {} `, `{}{}`, ``,
		strings.Repeat("[", 65) + strings.Repeat("]", 65),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, decided := valid(b)
		if !decided {
			return
		}
		if want := json.Valid(b); got != want {
			t.Errorf("scanner says %v for %q, encoding/json %v", got, b, want)
		}
	})
}

// Member gives names as they are written and refuses those encoding/json would have to
// unescape or might fold; String gives a string's bytes with its quotes.
func TestMember(t *testing.T) {
	s := New([]byte(` { "a" : "x\"y" , "b":1 }`))
	if s.Peek() != '{' {
		t.Fatal("no object")
	}
	s.Advance()
	k, end, ok := s.Member(true)
	if string(k) != "a" || end || !ok {
		t.Fatalf("first member: %q %v %v", k, end, ok)
	}
	if s.Peek() != '"' {
		t.Fatal("no string")
	}
	if v, ok := s.String(); string(v) != `"x\"y"` || !ok {
		t.Fatalf("string: %q %v", v, ok)
	}
	if k, _, _ := s.Member(false); string(k) != "b" {
		t.Fatalf("second member: %q", k)
	}
	if v, ok := s.Value(); string(v) != "1" || !ok {
		t.Fatalf("value: %q %v", v, ok)
	}
	if _, end, ok := s.Member(false); !end || !ok || !s.Done() {
		t.Fatal("object not closed")
	}
	for _, b := range []string{`{"a\u0062":1}`, "{\"\xc3\xa9\":1}"} {
		s := New([]byte(b))
		s.Advance()
		if _, _, ok := s.Member(true); ok {
			t.Errorf("Member accepted the name in %q", b)
		}
	}
	if !FoldsTo([]byte("Max_Tokens"), "n", "max_tokens") || FoldsTo([]byte("model"), "max_tokens") {
		t.Error("FoldsTo")
	}
}

// Element walks an array's elements and refuses a missing comma.
func TestElement(t *testing.T) {
	s := New([]byte(`[ 1 , {"a":[2]},"x" ]`))
	s.Advance()
	var got []string
	for first := true; ; first = false {
		end, ok := s.Element(first)
		if !ok {
			t.Fatalf("element %d refused", len(got))
		}
		if end {
			break
		}
		v, ok := s.Value()
		if !ok {
			t.Fatalf("value %d refused", len(got))
		}
		got = append(got, string(v))
	}
	if strings.Join(got, " ") != `1 {"a":[2]} "x"` || !s.Done() {
		t.Errorf("got %q", got)
	}
	s = New([]byte(`[1 2]`))
	s.Advance()
	s.Element(true)
	s.Value()
	if _, ok := s.Element(false); ok {
		t.Error("Element accepted a missing comma")
	}
}
