package anthropic

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// A plain call's answer reaches the relay as the streamed answer of the same script does.
func TestPlainMatchesStream(t *testing.T) {
	url, m := providertest.Mock(t)
	c := New(Config{BaseURL: url, APIKey: "sk-ant-test"})
	providertest.PlainMatches(t, c, testRequest,
		"text?len=300&chunk=7", "reason?think=40&len=50", "tools?calls=2", "tools?calls=1&args=%7B%7D",
		"refuse", "text?len=40&max=5", "empty", "text?len=20&finish=stop_sequence")
	if body := m.LastRequest("tools?calls=2"); bytes.Contains(body, []byte(`"stream":true`)) {
		t.Errorf("a plain call sent %s, want no stream", body)
	}
}

func TestPlainFails(t *testing.T) {
	url, _ := providertest.Mock(t)
	c := New(Config{BaseURL: url, APIKey: "sk-ant-test"})
	providertest.PlainFails(t, c, testRequest, map[string]llm.Kind{
		"text?fail=529":        llm.Unavailable,
		"text?fail=429":        llm.RateLimited,
		"text?fail=401":        llm.Auth,
		"text?fail=error":      llm.Unavailable,
		"text?len=99&fail=cut": llm.Unavailable,
		"text?fail=abort":      llm.Truncated,
	})
}

// A 2xx whose body is an error object, or not a finished message, fails before commit.
func TestPlainErrorIn200(t *testing.T) {
	for body, kind := range map[string]llm.Kind{
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`: llm.Unavailable,
		`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`:  llm.RateLimited,
		`<html>bad gateway</html>`: llm.Unavailable,
		`{"type":"message","id":"m","content":[{"type":"text","text":"hi"}],"stop_reason":null}`: llm.Truncated,
	} {
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		err := providertest.PlainEnd(t, u.client(Config{}), testRequest())
		if got := llm.KindOf(err); got != kind {
			t.Errorf("%s: got %v (%v), want %v", body, got, err, kind)
		}
	}
}
