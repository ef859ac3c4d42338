package llm

import "testing"

func TestKeySession(t *testing.T) {
	tests := []struct {
		name                      string
		header, key, decoded, usr string
		want                      string
	}{
		{name: "none", want: ""},
		{name: "user only", usr: "u", want: "u"},
		{name: "decoded before user", decoded: "meta", usr: "u", want: "meta"},
		{name: "prompt_cache_key before decoded", key: "pck", decoded: "meta", usr: "u", want: "pck"},
		{name: "header wins", header: "h", key: "pck", decoded: "meta", usr: "u", want: "h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Request{PromptCacheKey: tt.key, Session: tt.decoded, User: tt.usr}
			r.KeySession("") // the decoder's call, then the server's with the header
			r.KeySession(tt.header)
			if r.Session != tt.want {
				t.Fatalf("got %q, want %q", r.Session, tt.want)
			}
		})
	}
}
