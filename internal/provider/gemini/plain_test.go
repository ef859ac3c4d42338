package gemini

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// A generateContent answer reaches the relay as the streamGenerateContent answer of the same
// script does.
func TestPlainMatchesStream(t *testing.T) {
	url, m := providertest.Mock(t)
	c := New(Config{BaseURL: url + "/v1beta", APIKey: "gm-test"})
	providertest.PlainMatches(t, c, testRequest,
		"text?len=300&chunk=7", "reason?think=40&len=50", "tools?calls=2", "text?len=40&max=5", "empty")
	if m.Calls("tools?calls=2") != 2 {
		t.Errorf("the mock saw %d calls, want 2", m.Calls("tools?calls=2"))
	}
	providertest.PlainFails(t, c, testRequest, map[string]llm.Kind{
		"text?fail=500":        llm.Unavailable,
		"text?fail=429":        llm.RateLimited,
		"text?fail=403":        llm.Auth,
		"text?len=99&fail=cut": llm.Unavailable,
		"text?fail=abort":      llm.Truncated,
	})
}

// The plain call goes to :generateContent with the same body; an error object in a 200, or
// an answer whose candidate never finished, fails before commit.
func TestPlainCall(t *testing.T) {
	for body, kind := range map[string]llm.Kind{
		`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`:                    llm.Unavailable,
		`{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"index":0}]}`:                       llm.Truncated,
		`{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP","index":0}]}`: llm.Kind(0),
	} {
		u := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, ":generateContent") || r.URL.RawQuery != "" {
				w.WriteHeader(404)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		err := providertest.PlainEnd(t, client(u, Config{}), testRequest())
		if kind == 0 && err == io.EOF {
			continue // complete
		}
		if got := llm.KindOf(err); got != kind {
			t.Errorf("%s: got %v (%v), want %v", body, got, err, kind)
		}
	}
}
