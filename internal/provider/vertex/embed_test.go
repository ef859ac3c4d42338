package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// predictor is an httptest Vertex AI endpoint serving the embedding models' predict method
// for project proj in us-east5, behind the bearer token: each instance's vector is [its
// length, its index in the call], 3 tokens each; with bad set, answer is the answer.
type predictor struct {
	mu     sync.Mutex
	paths  []string
	bodies []string
	bad    string
}

func (p *predictor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths, p.bodies = append(p.paths, r.URL.Path), append(p.bodies, string(b))
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+token || !strings.HasPrefix(r.URL.Path, "/v1/projects/proj/locations/us-east5/publishers/google/models/") {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	if p.bad != "" {
		io.WriteString(w, p.bad)
		return
	}
	var req predictRequest
	json.Unmarshal(b, &req)
	var preds []string
	for i, in := range req.Instances {
		preds = append(preds, fmt.Sprintf(`{"embeddings":{"statistics":{"truncated":false,"token_count":3},"values":[%d,%d]}}`, len(in.Content), i))
	}
	io.WriteString(w, `{"predictions":[`+strings.Join(preds, ",")+`],"metadata":{"billableCharacterCount":9}}`)
}

func predictClient(t *testing.T, p http.Handler) *Client {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return New(Config{Endpoint: srv.URL, Project: "proj", Location: "us-east5",
		Token: func(context.Context) (string, error) { return token, nil }})
}

// The predict request as Google documents it (instances with content and task_type,
// outputDimensionality) on the model's path; the answer is OpenAI's list, base64 when asked,
// with the tokens as usage; gemini-embedding-001 gets one text a call.
func TestEmbed(t *testing.T) {
	p := &predictor{}
	c := predictClient(t, p)
	out, err := c.Plain(context.Background(), "embeddings", "text-embedding-005",
		[]byte(`{"model":"e","input":["hello","goodbye"],"dimensions":2,"input_type":"search_query"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[5,0]},{"object":"embedding","index":1,"embedding":[7,1]}],` +
		`"model":"text-embedding-005","usage":{"prompt_tokens":6,"total_tokens":6}}`
	if string(out) != want {
		t.Errorf("answer %s\nwant   %s", out, want)
	}
	wantReq := `{"instances":[{"content":"hello","task_type":"RETRIEVAL_QUERY"},{"content":"goodbye","task_type":"RETRIEVAL_QUERY"}],"parameters":{"outputDimensionality":2}}`
	if len(p.bodies) != 1 || p.bodies[0] != wantReq || p.paths[0] != "/v1/projects/proj/locations/us-east5/publishers/google/models/text-embedding-005:predict" {
		t.Errorf("requests %q %q\nwant %s", p.paths, p.bodies, wantReq)
	}

	p.bodies, p.paths = nil, nil
	out, err = c.Plain(context.Background(), "embeddings", "gemini-embedding-001", []byte(`{"model":"e","input":["a","bc"],"encoding_format":"base64"}`))
	if err != nil {
		t.Fatal(err)
	}
	// [1,0] and [2,0] as little-endian float32s.
	want = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AACAPwAAAAA="},{"object":"embedding","index":1,"embedding":"AAAAQAAAAAA="}],` +
		`"model":"gemini-embedding-001","usage":{"prompt_tokens":6,"total_tokens":6}}`
	if string(out) != want || len(p.bodies) != 2 || p.bodies[0] != `{"instances":[{"content":"a"}]}` {
		t.Errorf("gemini-embedding-001: %s, requests %q", out, p.bodies)
	}
}

// Faults: an answer that is not predict's (not JSON, fewer predictions than texts, a
// prediction without values) is Unavailable, so the chain falls back; token ids as input
// are the client's error (Invalid).
func TestEmbedFaults(t *testing.T) {
	for _, bad := range []string{`<html>`, `{"predictions":[{"embeddings":{"values":[1]}}]}`, `{"predictions":[{},{}]}`} {
		c := predictClient(t, &predictor{bad: bad})
		_, err := c.Plain(context.Background(), "embeddings", "text-embedding-005", []byte(`{"model":"e","input":["a","b"]}`))
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Unavailable {
			t.Errorf("%s: got %v, want Unavailable", bad, err)
		}
	}
	c := predictClient(t, &predictor{})
	_, err := c.Plain(context.Background(), "embeddings", "text-embedding-005", []byte(`{"model":"e","input":[[1,2,3]]}`))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.Invalid || !strings.Contains(e.Message, "not tokens") {
		t.Errorf("tokens: got %v, want Invalid", err)
	}
}
