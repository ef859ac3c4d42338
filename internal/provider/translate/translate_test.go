package translate

import (
	"encoding/json"
	"testing"
)

func TestToolChoice(t *testing.T) {
	tests := []struct{ raw, mode, name string }{
		{"", "", ""},
		{`"auto"`, "auto", ""},
		{`"required"`, "required", ""},
		{`{"type":"function","function":{"name":"f"}}`, "function", "f"},
		{`{"type":"allowed_tools"}`, `{"type":"allowed_tools"}`, ""},
	}
	for _, tt := range tests {
		if m, n := ToolChoice(json.RawMessage(tt.raw)); m != tt.mode || n != tt.name {
			t.Errorf("%s: got %q %q, want %q %q", tt.raw, m, n, tt.mode, tt.name)
		}
	}
}

func TestDataURL(t *testing.T) {
	mt, b, ok, err := DataURL("data:IMAGE/PNG;base64,aGk=")
	if mt != "image/png" || string(b) != "hi" || !ok || err != nil {
		t.Errorf("got %q %q %v %v", mt, b, ok, err)
	}
	if _, _, ok, _ := DataURL("https://x/cat.png"); ok {
		t.Error("an https URL is not a data: URL")
	}
	for _, u := range []string{"data:image/png,raw", "data:image/png;base64,!!"} {
		if _, _, ok, err := DataURL(u); !ok || err == nil {
			t.Errorf("%s: got ok %v err %v, want an error", u, ok, err)
		}
	}
}

func TestObject(t *testing.T) {
	for args, want := range map[string]string{"": "{}", ` {"a": 1} `: `{"a":1}`, "[1]": "", `{"a":`: ""} {
		got, ok := Object(args)
		if ok != (want != "") || ok && string(got) != want {
			t.Errorf("%q: got %s %v, want %q", args, got, ok, want)
		}
	}
}
