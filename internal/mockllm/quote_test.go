package mockllm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// quote= makes the error's message quote the request's headers and query: whole, or as
// OpenAI quotes a key (its first 12 and last 4 characters), in HTTP errors and in-stream.
func TestQuote(t *testing.T) {
	const key = "sk-proj-Qm7ZrT2xWv9LpK4nB8cD"
	srv := httptest.NewServer(newTestServer())
	defer srv.Close()
	for _, tt := range []struct{ model, want, not string }{
		{"text?fail=400&quote=all", "Authorization: Bearer " + key + ";", ""},
		{"text?fail=400&quote=all", "X-Custom: custom-value-123;", ""},
		{"text?fail=400&quote=all", "query: sig=abc;", ""},
		{"text?fail=500&quote=masked", "Authorization: sk-proj-Qm7Z****B8cD;", key},
		{"text?len=20&fail=error&after=2&quote=all", "Bearer " + key, ""},
	} {
		body := chatBody(tt.model, "hi", strings.Contains(tt.model, "after"), false)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions?sig=abc", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Custom", "custom-value-123")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), tt.want) || tt.not != "" && strings.Contains(string(b), tt.not) {
			t.Errorf("%s: got %s, want it to hold %q (and not %q)", tt.model, b, tt.want, tt.not)
		}
	}
}
