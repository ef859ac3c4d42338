package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "ya29.vertex-SECRET"

// upstream is an httptest Vertex AI endpoint for project proj in us-east5: Anthropic's
// streamRawPredict (the body without model, with anthropic_version; the replayed fixture
// answers) and Google's streamGenerateContent, both behind the bearer token.
func upstream(t *testing.T) *providertest.Upstream {
	t.Helper()
	claude, err := os.ReadFile("testdata/anthropic-text.sse")
	if err != nil {
		t.Fatal(err)
	}
	var u *providertest.Upstream
	u = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _, _ := u.Last()
		if r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("X-Api-Key") != "" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token.","status":"UNAUTHENTICATED"}}`)
			return
		}
		const root = "/v1/projects/proj/locations/us-east5/publishers/"
		switch r.URL.Path {
		case root + "anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict":
			var b map[string]json.RawMessage
			json.Unmarshal(body, &b)
			if _, ok := b["model"]; ok || string(b["anthropic_version"]) != `"vertex-2023-10-16"` || r.Header.Get("Anthropic-Version") != "" {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"code":400,"message":"bad body `+string(body)+`","status":"INVALID_ARGUMENT"}}`)
				return
			}
			providertest.SSE(string(claude))(w, r)
		case root + "anthropic/models/claude-sonnet-4-5@20250929:rawPredict":
			var b map[string]json.RawMessage
			json.Unmarshal(body, &b)
			if _, ok := b["model"]; ok || string(b["stream"]) == "true" {
				w.WriteHeader(400)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"type":"message","id":"msg_1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"from Claude, whole"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":4}}`)
		case root + "google/models/gemini-2.5-pro:generateContent":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"from Gemini, whole"}],"role":"model"},"finishReason":"STOP","index":0}],"responseId":"g1"}`)
		case root + "google/models/gemini-2.5-pro:streamGenerateContent":
			providertest.SSE(`data: {"candidates":[{"content":{"parts":[{"text":"from Gemini"}],"role":"model"},"finishReason":"STOP","index":0}],"responseId":"g1"}`+"\r\n\r\n")(w, r)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"code":404,"message":"Publisher model not found.","status":"NOT_FOUND"}}`)
		}
	})
	return u
}

func client(u *providertest.Upstream, tok func(context.Context) (string, error)) *Client {
	return New(Config{Endpoint: u.URL, Project: "proj", Location: "us-east5", Token: tok})
}

func static(context.Context) (string, error) { return token, nil }

func answer(t *testing.T, c *Client, model string) (*llm.Response, error) {
	t.Helper()
	s, err := c.Stream(context.Background(), &llm.Request{Model: model, Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}}})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	if end != io.EOF {
		return nil, end
	}
	return providertest.Assemble(evs), nil
}

// TestPublishers: a Claude model goes to Anthropic's streamRawPredict (model in the URL,
// anthropic_version in the body, the bearer token for x-api-key) through the Anthropic
// adapter; any other to Google's streamGenerateContent through the Gemini one.
func TestPublishers(t *testing.T) {
	u := upstream(t)
	c := client(u, static)
	r, err := answer(t, c, "claude-sonnet-4-5@20250929")
	if err != nil {
		t.Fatal(err)
	}
	if ch := r.Choices[0]; ch.Text != "Hello there!" || ch.Finish != "stop" {
		t.Errorf("claude: got %+v", ch)
	}
	r, err = answer(t, c, "gemini-2.5-pro")
	if err != nil || r.Choices[0].Text != "from Gemini" {
		t.Fatalf("gemini: got %+v, %v", r, err)
	}
}

// TestAuth: a token that cannot be had is Auth and nothing is sent, on either publisher; a
// refused token is Auth; the token never shows in an error.
func TestAuth(t *testing.T) {
	u := upstream(t)
	fail := func(context.Context) (string, error) { return "", errors.New("token endpoint: 400 invalid_grant") }
	for _, m := range []string{"claude-sonnet-4-5@20250929", "gemini-2.5-pro"} {
		if _, err := answer(t, client(u, fail), m); llm.KindOf(err) != llm.Auth {
			t.Errorf("%s: got %v, want Auth", m, err)
		}
	}
	if body, _, _ := u.Last(); body != nil {
		t.Errorf("the upstream got a call")
	}
	wrong := func(context.Context) (string, error) { return "ya29.wrong", nil }
	for _, m := range []string{"claude-sonnet-4-5@20250929", "gemini-2.5-pro"} {
		_, err := answer(t, client(u, wrong), m)
		if llm.KindOf(err) != llm.Auth || strings.Contains(err.Error(), "ya29") {
			t.Errorf("%s: got %v, want Auth without the token", m, err)
		}
	}
}

// upstream: plain: a Claude model goes to rawPredict, a Gemini model to generateContent.
func TestPlain(t *testing.T) {
	c := client(upstream(t), static)
	for model, want := range map[string]string{"claude-sonnet-4-5@20250929": "from Claude, whole", "gemini-2.5-pro": "from Gemini, whole"} {
		req := &llm.Request{Model: model, Plain: true, Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}}}
		s, err := c.Stream(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		evs, end := providertest.Drain(t, s)
		s.Close()
		if got := providertest.Assemble(evs); end != io.EOF || len(got.Choices) != 1 || got.Choices[0].Text != want {
			t.Errorf("%s: got %+v, %v; want %q", model, got, end, want)
		}
	}
}
