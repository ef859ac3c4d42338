package gemini

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

const (
	testKey   = "AIzaSyTEST-SECRET-KEY"
	testModel = "gemini-2.5-flash"
)

// sseBody frames a *.chunks.txt fixture (one GenerateContentResponse per line) as the
// Gemini API sends it with alt=sse: "data: " + JSON + CRLF CRLF.
func sseBody(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out.WriteString("data: " + line + "\r\n\r\n")
		}
	}
	return out.String()
}

// upstream is an httptest Gemini API: it refuses a call without the test key as the API
// does (400 API_KEY_INVALID), and checks the path, then runs h.
func upstream(t *testing.T, h http.HandlerFunc) *providertest.Upstream {
	t.Helper()
	return providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Goog-Api-Key") != testKey {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`))
			return
		}
		if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") || r.URL.Query().Get("alt") != "sse" {
			w.WriteHeader(404)
			return
		}
		h(w, r)
	})
}

func client(u *providertest.Upstream, c Config) *Client {
	c.BaseURL = u.URL + "/v1beta"
	if c.APIKey == "" {
		c.APIKey = testKey
	}
	return New(c)
}

func testRequest() *llm.Request {
	return &llm.Request{Model: testModel, Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}}}
}

func wantKind(t *testing.T, err error, k llm.Kind) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != k {
		t.Fatalf("got %v (kind %v), want kind %v", err, llm.KindOf(err), k)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatalf("error %q holds the key", err)
	}
	return le
}
