package oai

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name, body, param, msg string
	}{
		{"malformed", `{"a":`, "", "could not parse"},
		{"not an object", `[1]`, "", "must be a JSON object"},
		{"null", `null`, "", "must be a JSON object"},
		{"duplicate", `{"a":1,"a":2}`, "a", "Duplicate field 'a'"},
		{"trailing object", `{"a":1} {}`, "", "data after the top-level object"},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", "", "invalid UTF-8 (at byte 6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Scan([]byte(tt.body), func(string, json.RawMessage) error { return nil })
			e, ok := err.(*llm.Error)
			if !ok || e.Kind != llm.Invalid || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("got %#v, want an Invalid error on %q saying %q", err, tt.param, tt.msg)
			}
		})
	}
	var keys []string
	err := Scan([]byte(`{"b":1,"a":{"x":[1]}}`), func(k string, raw json.RawMessage) error {
		keys = append(keys, k+"="+string(raw))
		return nil
	})
	if err != nil || strings.Join(keys, " ") != `b=1 a={"x":[1]}` {
		t.Errorf("got %v %v, want the members in order, raw", keys, err)
	}
	// A member's value is a view into the body: appending to it must not write over the body.
	body := []byte(`{"a":1,"b":2}`)
	Scan(body, func(k string, raw json.RawMessage) error {
		_ = append(raw, "xxxx"...)
		return nil
	})
	if string(body) != `{"a":1,"b":2}` {
		t.Errorf("an append to a member's value changed the body to %s", body)
	}
}

// The error body is OpenAI's: null param and code when unset, the public wording.
func TestErrorBody(t *testing.T) {
	got := string(ErrorBody(Invalid("", "bad <body> & \"quote\"")))
	want := `{"error":{"message":"bad <body> & \"quote\"","type":"invalid_request_error","param":null,"code":null}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	got = string(ErrorBody(&llm.Error{Kind: llm.NotFound, Param: "model", Message: "no such model"}))
	want = `{"error":{"message":"no such model","type":"invalid_request_error","param":"model","code":"model_not_found"}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestRateLimit(t *testing.T) {
	h := http.Header{}
	RateLimit(h, "tokens", 0, 0, time.Second) // no limit
	RateLimit(h, "requests", 60, 59, 1500*time.Microsecond+59*time.Second)
	want := http.Header{"X-Ratelimit-Limit-Requests": {"60"}, "X-Ratelimit-Remaining-Requests": {"59"}, "X-Ratelimit-Reset-Requests": {"59.002s"}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	RateLimit(h, "requests", 60, 0, -time.Second)
	if got := h.Get("X-Ratelimit-Reset-Requests"); got != "0s" {
		t.Errorf("a past reset: %q, want 0s", got)
	}
}

// Scan's fast path (split) and the decoder agree on every body: the same members in the same
// order, raw byte for byte, and the same error.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,{"c":"d"}]}`, `{"a":1,"a":2}`, `{"a":1} {}`, `{"a":1}x`,
		`{"\u0061":1}`, ` {"a" : "\"x\"" } `, `{}`, `[1]`, `{"a":`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"a":1e400}`, `{"a":-0.5E+2,"b":"\ud800"}`, `{"e":1,"d":1,"c":1,"b":1,"a":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"q":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		record := func(scan func([]byte, func(string, json.RawMessage) error) error) string {
			var b strings.Builder
			err := scan(body, func(k string, raw json.RawMessage) error {
				b.WriteString(k + "=" + string(raw) + "\n")
				if k == "stop" { // a field error stops the walk where it is
					return Invalid(k, "stop")
				}
				return nil
			})
			return b.String() + "err: " + errText(err)
		}
		fast := record(Scan)
		slow := record(func(b []byte, f func(string, json.RawMessage) error) error {
			if err := ValidUTF8(b); err != nil {
				return err
			}
			return decode(b, f)
		})
		if fast != slow {
			t.Errorf("body %q:\nScan:\n%s\ndecoder:\n%s", body, fast, slow)
		}
	})
}

func errText(err error) string {
	if e, ok := err.(*llm.Error); ok {
		return e.Param + ": " + e.Message
	}
	if err != nil {
		return err.Error()
	}
	return "none"
}

// Elements gives what json.Unmarshal into a []json.RawMessage gives, byte for byte, error
// for error, and its elements cannot be appended over the array.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1, {"a":[2]} ,"x"]`, ` [ null ] `, `null`, `{}`, `[1,]`, `[1 2]`, `[1]x`, `"s"`, ``,
		strings.Repeat("[", 70) + strings.Repeat("]", 70)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := Elements(raw)
		var want []json.RawMessage
		wantErr := json.Unmarshal(raw, &want)
		if errText(err) != errText(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("Elements(%q) = %q, %v; json.Unmarshal: %q, %v", raw, got, err, want, wantErr)
		}
		if len(got) > 1 {
			before := string(raw)
			_ = append(got[0], "xx"...)
			if string(raw) != before {
				t.Fatalf("an append to an element changed the array to %q", raw)
			}
		}
	})
}
