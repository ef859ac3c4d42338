package bedrock

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// A Converse answer reaches the relay as the ConverseStream frames of the same answer do:
// reasoning with its signature, text, a tool use with input and one without, usage.
func TestPlainMatchesStream(t *testing.T) {
	stream := frames(
		frame(t, "messageStart", `{"role":"assistant"}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Let me think."}}}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"c2ln"}}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":0}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"Checking "}}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"the weather."}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":1}`),
		frame(t, "contentBlockStart", `{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"tu_1","name":"get_weather"}}}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"city\":"}}}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":2}`),
		frame(t, "contentBlockStart", `{"contentBlockIndex":3,"start":{"toolUse":{"toolUseId":"tu_2","name":"now"}}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":3}`),
		frame(t, "messageStop", `{"stopReason":"tool_use"}`),
		frame(t, "metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15,"cacheReadInputTokens":4},"metrics":{"latencyMs":120}}`),
	)
	const answer = `{"output":{"message":{"role":"assistant","content":[
		{"reasoningContent":{"reasoningText":{"text":"Let me think.","signature":"c2ln"}}},
		{"text":"Checking the weather."},
		{"toolUse":{"toolUseId":"tu_1","name":"get_weather","input":{"city":"Paris"}}},
		{"toolUse":{"toolUseId":"tu_2","name":"now","input":{}}}]}},
		"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15,"cacheReadInputTokens":4},"metrics":{"latencyMs":90}}`
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/converse-stream") {
			stream(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Requestid", "req-123")
		io.WriteString(w, strings.NewReplacer("\n", "", "\t", "").Replace(answer))
	})
	c := u.client(Config{})
	get := func(plain bool) *llm.Response {
		req := testRequest()
		req.Plain = plain
		s, err := c.Stream(context.Background(), req)
		if err != nil {
			t.Fatalf("plain=%v: %v", plain, err)
		}
		defer s.Close()
		evs, end := providertest.Drain(t, s)
		if end != io.EOF {
			t.Fatalf("plain=%v: ended with %v", plain, end)
		}
		if _, _, url := u.Last(); strings.HasSuffix(url, "/converse-stream") == plain {
			t.Errorf("plain=%v called %s", plain, url)
		}
		return providertest.Assemble(evs)
	}
	if s, p := get(false), get(true); !reflect.DeepEqual(p, s) {
		t.Errorf("the plain answer differs from the streamed one:\nplain    %+v\nstreamed %+v", p, s)
	}
}

// An exception status, a body that is not a Converse answer or has no stopReason, fail
// before commit.
func TestPlainFails(t *testing.T) {
	for body, want := range map[string]llm.Kind{
		`{"message":"Too many requests"}`:                    llm.RateLimited, // with status 429
		`<html>bad gateway</html>`:                           llm.Unavailable,
		`{"output":{"message":{"content":[{"text":"hi"}]}}}`: llm.Truncated,
	} {
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if strings.Contains(body, "Too many") {
				w.Header().Set("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
				w.WriteHeader(http.StatusTooManyRequests)
			}
			io.WriteString(w, body)
		})
		wantKind(t, providertest.PlainEnd(t, u.client(Config{}), testRequest()), want)
	}
}
