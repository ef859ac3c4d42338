package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// embedUpstream is an OpenAI-compatible embeddings endpoint that answers status (and, on
// 200, its vectors) and records what it was sent.
type embedUpstream struct {
	status int
	mu     sync.Mutex
	calls  int
	last   string
}

const vectors = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,-0.5]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`

func (u *embedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.calls++
	u.last = r.URL.Path + " " + string(b)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(u.status)
	if u.status == 200 {
		io.WriteString(w, vectors)
		return
	}
	io.WriteString(w, `{"error":{"message":"upstream says `+http.StatusText(u.status)+`","type":"server_error"}}`)
}

func (u *embedUpstream) Calls() (int, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls, u.last
}

// embedGateway serves the alias embed = [a/text-embedding-3-small, b/emb-deploy] where b is
// an Azure-style deployment of the same model, over two httptest upstreams.
func embedGateway(t *testing.T, a, b *embedUpstream) string {
	t.Helper()
	as, bs := httptest.NewServer(a), httptest.NewServer(b)
	yaml := `
providers:
  a: {kind: openai-compatible, base_url: "${A_URL}/v1"}
  b: {kind: openai-compatible, base_url: "${B_URL}/v1"}
models:
  default: [b/chat]
embeddings:
  embed:
    targets: [a/text-embedding-3-small, {target: b/emb-deploy, embedding_model: text-embedding-3-small}]
`
	gs := serveConfig(t, yaml, map[string]string{"A_URL": as.URL, "B_URL": bs.URL})
	t.Cleanup(func() {
		gs.Close()
		as.Close()
		bs.Close()
	})
	return gs.URL
}

func TestEmbeddingsFallback(t *testing.T) {
	const body = `{"input":["hello"],"model":"embed","encoding_format":"float","dimensions":2,"input_type":"query"}`
	tests := []struct {
		name           string
		aStatus        int
		status         int
		target, code   string
		aCalls, bCalls int
	}{
		{"first serves", 200, 200, "a/text-embedding-3-small", "", 1, 0},
		{"500 falls back to the same model", 500, 200, "b/emb-deploy", "", 1, 1},
		{"429 falls back", 429, 200, "b/emb-deploy", "", 1, 1},
		{"400 is the request's: returned as is", 400, 400, "", "", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := &embedUpstream{status: tt.aStatus}, &embedUpstream{status: 200}
			url := embedGateway(t, a, b)
			resp := postTo(t, url, "/v1/embeddings", body)
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || resp.Header.Get("X-Sluice-Target") != tt.target {
				t.Fatalf("got %d from %q: %s, want %d from %q", resp.StatusCode, resp.Header.Get("X-Sluice-Target"), got, tt.status, tt.target)
			}
			ac, _ := a.Calls()
			bc, blast := b.Calls()
			if ac != tt.aCalls || bc != tt.bCalls {
				t.Errorf("got calls a=%d b=%d, want %d and %d", ac, bc, tt.aCalls, tt.bCalls)
			}
			if tt.status != 200 {
				return
			}
			if string(got) != vectors || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("got %s, want the upstream's answer unchanged", got)
			}
			// The upstream gets the client's body with its own model name, members in order.
			if want := `/v1/embeddings {"model":"emb-deploy","input":["hello"],"encoding_format":"float","dimensions":2,"input_type":"query"}`; tt.bCalls == 1 && blast != want {
				t.Errorf("got upstream request %s, want %s", blast, want)
			}
		})
	}
}

func TestEmbeddingsExhaustedAndCooling(t *testing.T) {
	a, b := &embedUpstream{status: 500}, &embedUpstream{status: 503}
	url := embedGateway(t, a, b)
	for i := range 4 {
		resp := postTo(t, url, "/v1/embeddings", `{"model":"embed","input":"hi"}`)
		got, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(got, &e)
		if i < 3 && (resp.StatusCode != 502 || e.Error.Code != "all_targets_failed" || resp.Header.Get("X-Should-Retry") != "false" ||
			!strings.Contains(e.Error.Message, "a/text-embedding-3-small: 500")) {
			t.Fatalf("request %d: got %d %s, want 502 all_targets_failed naming each attempt", i, resp.StatusCode, got)
		}
		if i == 3 && (resp.StatusCode != 503 || e.Error.Code != "all_targets_cooling_down") {
			t.Errorf("request %d: got %d %s, want 503 once every target cools down", i, resp.StatusCode, got)
		}
	}
	// Three failures put each target in cooldown: the fourth request probed one only.
	ac, _ := a.Calls()
	bc, _ := b.Calls()
	if ac+bc != 7 {
		t.Errorf("got calls a=%d b=%d, want 7 in all: the shared health store holds the cooldowns", ac, bc)
	}
}

func TestEmbeddingsRequests(t *testing.T) {
	a, b := &embedUpstream{status: 200}, &embedUpstream{status: 200}
	url := embedGateway(t, a, b)
	tests := []struct {
		name, body string
		status     int
		param      string
		code       string
	}{
		{"direct target", `{"model":"b/text-embedding-3-small","input":"hi"}`, 200, "", ""},
		{"token arrays", `{"model":"embed","input":[[1,2],[3]]}`, 200, "", ""},
		{"unknown alias", `{"model":"nope","input":"hi"}`, 404, "model", "model_not_found"},
		{"chat alias", `{"model":"default","input":"hi"}`, 404, "model", "model_not_found"},
		{"missing input", `{"model":"embed"}`, 400, "input", ""},
		{"empty input", `{"model":"embed","input":[]}`, 400, "input", ""},
		{"input of objects", `{"model":"embed","input":[{"a":1}]}`, 400, "input", ""},
		{"encoding_format", `{"model":"embed","input":"hi","encoding_format":"int8"}`, 400, "encoding_format", ""},
		{"dimensions", `{"model":"embed","input":"hi","dimensions":0}`, 400, "dimensions", ""},
		{"missing model", `{"input":"hi"}`, 400, "model", ""},
		{"malformed", `{"model":`, 400, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postTo(t, url, "/v1/embeddings", tt.body)
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, got, tt.status)
			}
			if tt.status == 200 {
				return
			}
			var e struct {
				Error struct {
					Param, Code *string
					Type        string
				}
			}
			if json.Unmarshal(got, &e) != nil || e.Error.Type != "invalid_request_error" ||
				(tt.param != "" && (e.Error.Param == nil || *e.Error.Param != tt.param)) ||
				(tt.code != "" && (e.Error.Code == nil || *e.Error.Code != tt.code)) {
				t.Errorf("got %s, want an invalid_request_error on %q code %q", got, tt.param, tt.code)
			}
		})
	}
	r, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if b, _ := io.ReadAll(r.Body); !strings.Contains(string(b), `{"id":"embed"`) {
		t.Errorf("got %s, want the embeddings alias listed", b)
	}
}

// Through the mock's embed script, in-process (sim): a failing target falls back to the next
// one of the same embedding model, named so with embedding_model.
func TestEmbeddingsThroughMock(t *testing.T) {
	gs := serveConfig(t, `
providers: {sim: {kind: sim}}
models: {default: [sim/echo]}
embeddings:
  e:
    targets:
      - {target: "sim/embed?dims=4&fail=503", embedding_model: embed}
      - {target: "sim/embed?dims=4", embedding_model: embed}
`, nil)
	t.Cleanup(gs.Close)
	resp := postTo(t, gs.URL, "/v1/embeddings", `{"model":"e","input":["a","b"]}`)
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Data []struct {
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || len(out.Data) != 2 || len(out.Data[0].Embedding) != 4 {
		t.Fatalf("got %d %s, want two vectors of 4", resp.StatusCode, b)
	}
	if got := resp.Header.Get("X-Sluice-Target"); got != "sim/embed?dims=4" || resp.Header.Get("X-Sluice-Attempts") != "2" {
		t.Errorf("got target %q after %s attempts, want the second after 2", got, resp.Header.Get("X-Sluice-Attempts"))
	}
}
