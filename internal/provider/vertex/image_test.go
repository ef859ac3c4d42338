package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// imagen is an httptest Vertex AI endpoint serving the Imagen models' predict method for
// project proj in us-east5, behind the bearer token: it answers status with answer, in
// which %s is the request's bearer token, and records the paths and bodies it got.
type imagen struct {
	mu            sync.Mutex
	status        int
	answer        string
	paths, bodies []string
}

func (p *imagen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths, p.bodies = append(p.paths, r.URL.EscapedPath()), append(p.bodies, string(b))
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+token || r.Method != "POST" {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	if p.status != 0 {
		w.WriteHeader(p.status)
	}
	io.WriteString(w, strings.ReplaceAll(p.answer, "%s", r.Header.Get("Authorization")))
}

// A generation is one predict call on the model's path with the prompt as the one instance,
// sampleCount from n and the aspect ratio nearest size (1792x1024: 16:9); the images the
// safety filter let through are OpenAI's b64_json list. Without a size, no aspectRatio.
func TestImage(t *testing.T) {
	p := &imagen{answer: `{"predictions":[{"mimeType":"image/png","bytesBase64Encoded":"iVBORw0KGgo="},{"raiFilteredReason":"filtered"},{"mimeType":"image/png","bytesBase64Encoded":"AAAA"}]}`}
	c := predictClient(t, p)
	out, err := c.Plain(context.Background(), "images/generations", "imagen-3.0-generate-002",
		[]byte(`{"model":"img","prompt":"a lighthouse","n":3,"size":"1792x1024"}`))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Created int64
		Data    []map[string]string
	}
	if json.Unmarshal(out, &a) != nil || a.Created == 0 || len(a.Data) != 2 || a.Data[0]["b64_json"] != "iVBORw0KGgo=" || a.Data[1]["b64_json"] != "AAAA" {
		t.Errorf("answer %s", out)
	}
	want := `{"instances":[{"prompt":"a lighthouse"}],"parameters":{"sampleCount":3,"aspectRatio":"16:9"}}`
	if len(p.bodies) != 1 || p.bodies[0] != want || p.paths[0] != "/v1/projects/proj/locations/us-east5/publishers/google/models/imagen-3.0-generate-002:predict" {
		t.Errorf("request %q %q\nwant %s", p.paths, p.bodies, want)
	}
	if _, err := c.Plain(context.Background(), "images/generations", "imagen-4.0-generate-001", []byte(`{"prompt":"a cat","size":"auto"}`)); err != nil {
		t.Fatal(err)
	}
	if want := `{"instances":[{"prompt":"a cat"}],"parameters":{"sampleCount":1}}`; p.bodies[1] != want {
		t.Errorf("request %s, want %s", p.bodies[1], want)
	}
}

// Faults: an upstream failing (500 quoting the token) is Unavailable with no token in its
// words; an answer that is not Imagen's (not JSON, no predictions, every image filtered) is
// Unavailable, so the chain falls back; response_format url and a size of no aspect ratio
// Imagen generates are Invalid, uncalled.
func TestImageFaults(t *testing.T) {
	for _, tt := range []struct {
		status int
		answer string
	}{{500, `{"error":{"code":500,"message":"internal error for %s","status":"INTERNAL"}}`}, {200, `<html>`},
		{200, `{}`}, {200, `{"predictions":[{"raiFilteredReason":"filtered"}]}`}} {
		c := predictClient(t, &imagen{status: tt.status, answer: tt.answer})
		c.scrub = func(s string) string { return strings.ReplaceAll(s, token, "[key]") }
		_, err := c.Plain(context.Background(), "images/generations", "imagen-3.0-generate-002", []byte(`{"prompt":"p"}`))
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Unavailable {
			t.Errorf("%d %s: got %v, want Unavailable", tt.status, tt.answer, err)
		} else if strings.Contains(e.Error(), token) {
			t.Errorf("the error shows the token: %s", e.Error())
		}
	}
	p := &imagen{answer: `{"predictions":[]}`}
	c := predictClient(t, p)
	for _, body := range []string{`{"prompt":"p","response_format":"url"}`, `{"prompt":"p","size":"1000x200"}`, `{"prompt":"p","size":"big"}`} {
		_, err := c.Plain(context.Background(), "images/generations", "imagen-3.0-generate-002", []byte(body))
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Invalid || e.Status != http.StatusBadRequest {
			t.Errorf("%s: got %v, want Invalid 400", body, err)
		}
	}
	if len(p.bodies) != 0 {
		t.Errorf("refused requests were sent: %q", p.bodies)
	}
}
