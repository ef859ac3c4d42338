package openai

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
	c := New(Config{BaseURL: url + "/v1", APIKey: "sk-test"})
	providertest.PlainMatches(t, c, testRequest,
		"text?len=300&chunk=7", "reason?think=40&len=50", "tools?calls=2", "refuse",
		"text?len=20&n=2", "text?len=40&max=5", "text?len=30&logprobs=1", "empty")
	if body := m.LastRequest("tools?calls=2"); !bytes.Contains(body, []byte(`"stream":false`)) || bytes.Contains(body, []byte("stream_options")) {
		t.Errorf("a plain call sent %s, want stream false and no stream_options", body)
	}
}

func TestPlainFails(t *testing.T) {
	url, _ := providertest.Mock(t)
	c := New(Config{BaseURL: url + "/v1", APIKey: "sk-test"})
	providertest.PlainFails(t, c, testRequest, map[string]llm.Kind{
		"text?fail=500":        llm.Unavailable,
		"text?fail=429":        llm.RateLimited,
		"text?fail=401":        llm.Auth,
		"text?fail=error":      llm.Unavailable,
		"text?len=99&fail=cut": llm.Unavailable, // half a JSON body: not an answer
		"text?fail=abort":      llm.Truncated,
	})
}

// A 200 whose body is an error object, or not a completion, fails before anything is
// committed: the chain falls back.
func TestPlainErrorIn200(t *testing.T) {
	for body, kind := range map[string]llm.Kind{
		`{"error":{"message":"The server had an error","type":"server_error"}}`:            llm.Unavailable,
		`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`: llm.RateLimited,
		`<html>bad gateway</html>`:                                      llm.Unavailable,
		`{"id":"x","choices":[{"index":0,"message":{"content":"hi"}}]}`: llm.Truncated, // no finish
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

func TestPlainResponsesMatchesStream(t *testing.T) {
	url, m := providertest.Mock(t)
	c := NewResponses(Config{BaseURL: url + "/v1", APIKey: "sk-test"})
	providertest.PlainMatches(t, c, testRequest,
		"text?len=300&chunk=7", "reason?think=40&len=50", "tools?calls=2", "refuse", "text?len=40&max=5", "empty")
	if body := m.LastRequest("tools?calls=2"); !bytes.Contains(body, []byte(`"stream":false`)) {
		t.Errorf("a plain call sent %s, want stream false", body)
	}
	providertest.PlainFails(t, c, testRequest, map[string]llm.Kind{
		"text?fail=500":        llm.Unavailable,
		"text?fail=429":        llm.RateLimited,
		"text?len=99&fail=cut": llm.Unavailable,
		"text?fail=abort":      llm.Truncated,
	})
}
