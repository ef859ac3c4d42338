package retrieval_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/rerank"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/cohere"
	"github.com/sluice-gw/sluice/internal/provider/jina"
	"github.com/sluice-gw/sluice/internal/provider/retrieval"
	"github.com/sluice-gw/sluice/internal/provider/voyage"
)

// key is the provider key; the failing upstreams quote it back.
const key = "co-Xk29fLq8RtV3mZp7WnB4sJd6Hy1Ge5Uc"

// upstream speaks one provider's wire on loopback: status, headers and body as set, and
// records what it got.
type upstream struct {
	mu     sync.Mutex
	status int
	header http.Header
	body   string // on a 2xx; else quoting the Authorization header when it holds %s
	path   string
	auth   string
	got    []byte
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.path, u.auth, u.got = r.URL.Path, r.Header.Get("Authorization"), b
	for k, v := range u.header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(u.status)
	io.WriteString(w, strings.ReplaceAll(u.body, "%s", strings.TrimPrefix(u.auth, "Bearer ")))
}

// serve starts u and a client of routes for it, whose scrubber masks key as the gateway's
// does.
func serve(t *testing.T, u *upstream, routes map[string]retrieval.Route) *retrieval.Client {
	t.Helper()
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return retrieval.New(retrieval.Config{Name: "prov", BaseURL: srv.URL + "/", APIKey: key, Routes: routes,
		Scrub: func(s string) string { return strings.ReplaceAll(s, key, "[MASKED]") }})
}

// call runs body through the client wire's decoder, as the gateway does, and the client's
// Plain: the model is the client's.
func call(t *testing.T, c *retrieval.Client, path, body string) ([]byte, error) {
	t.Helper()
	decode := map[string]func([]byte) (string, *llm.Request, error){"rerank": rerank.Decode, "embeddings": embeddings.Decode}[path]
	model, req, err := decode([]byte(body))
	if err != nil {
		t.Fatalf("the client wire refused %s: %v", body, err)
	}
	return c.Plain(context.Background(), path, model, embeddings.Body(req))
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(got), "", "  "); err != nil {
		t.Fatalf("%s: not JSON: %s", name, got)
	}
	b.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, b.Bytes(), want)
	}
}

const (
	rerankBody    = `{"model":"rr","query":"capital of France","documents":["Berlin is the capital of Germany.",{"text":"Paris is the capital of France."}],"top_n":2,"return_documents":true}`
	rerankPlain   = `{"model":"rr","query":"capital of France","documents":["Berlin is the capital of Germany.","Paris is the capital of France."],"top_n":2}`
	embeddingBody = `{"model":"e","input":["hello","goodbye"],"encoding_format":"float","dimensions":3,"user":"u-1"}`
)

// wires are the adapters' routes under test, each with its model and its error body.
var wires = []struct {
	name   string
	routes map[string]retrieval.Route
	model  string
	// errorBody is the provider's error, quoting the key (%s).
	errorBody string
}{
	{"cohere", cohere.Routes, "rerank-v3.5", `{"id":"b6f3c0a1","message":"invalid api token: %s"}`},
	{"jina", jina.Routes, "jina-reranker-v2-base-multilingual", `{"detail":"Failed to authenticate with key %s"}`},
	{"voyage", voyage.Routes, "rerank-2.5", `{"detail":"Provided API key is invalid: %s"}`},
}

// Each adapter speaks its wire: the request it sends (golden), its path and bearer key, and
// the client's answer translated from the upstream's recorded answer (golden), usage
// included as the client wire reads it.
func TestWires(t *testing.T) {
	tests := []struct {
		wire, path, body, upPath string
		usage                    llm.Usage
	}{
		{"cohere", "rerank", rerankBody, "/v2/rerank", llm.Usage{Units: 1}},
		{"cohere", "embeddings", `{"model":"e","input":["hello","goodbye"],"encoding_format":"float","input_type":"search_query"}`, "/v2/embed", llm.Usage{PromptTokens: 2, TotalTokens: 2}},
		{"jina", "rerank", rerankBody, "/rerank", llm.Usage{PromptTokens: 38, TotalTokens: 38}},
		{"voyage", "rerank", rerankBody, "/rerank", llm.Usage{PromptTokens: 26, TotalTokens: 26}},
		{"voyage", "embeddings", embeddingBody, "/embeddings", llm.Usage{PromptTokens: 7, TotalTokens: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.wire+"-"+tt.path, func(t *testing.T) {
			answer, err := os.ReadFile(filepath.Join("testdata", tt.wire+"-"+tt.path+".answer.json"))
			if err != nil {
				t.Fatal(err)
			}
			u := &upstream{status: 200, body: string(answer)}
			var routes map[string]retrieval.Route
			for _, w := range wires {
				if w.name == tt.wire {
					routes = w.routes
				}
			}
			c := serve(t, u, routes)
			model := map[string]string{"rerank": "the-reranker", "embeddings": "the-embedder"}[tt.path]
			body := strings.Replace(tt.body, `"model":"rr"`, `"model":"`+model+`"`, 1)
			body = strings.Replace(body, `"model":"e"`, `"model":"`+model+`"`, 1)
			out, err := call(t, c, tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if u.path != tt.upPath || u.auth != "Bearer "+key {
				t.Errorf("upstream got %s with %q, want %s with the bearer key", u.path, u.auth, tt.upPath)
			}
			var sent map[string]any
			if json.Unmarshal(u.got, &sent) != nil || sent["model"] != model {
				t.Errorf("upstream got %s, want model %s", u.got, model)
			}
			golden(t, tt.wire+"-"+tt.path+".request.golden", u.got)
			golden(t, tt.wire+"-"+tt.path+".want.golden", out)
			usage := map[string]func([]byte) (llm.Usage, bool){"rerank": rerank.Usage, "embeddings": embeddings.Usage}[tt.path]
			if got, ok := usage(out); !ok || got != tt.usage {
				t.Errorf("usage: got %+v (%v), want %+v", got, ok, tt.usage)
			}
		})
	}
}

// Without return_documents the answers carry no document, and Cohere's passes unchanged.
func TestRerankWithoutDocuments(t *testing.T) {
	answer, _ := os.ReadFile("testdata/cohere-rerank.answer.json")
	c := serve(t, &upstream{status: 200, body: string(answer)}, cohere.Routes)
	out, err := call(t, c, "rerank", rerankPlain)
	if err != nil || !bytes.Equal(out, answer) {
		t.Errorf("got %s (%v), want Cohere's answer unchanged", out, err)
	}
	answer, _ = os.ReadFile("testdata/voyage-rerank.answer.json")
	c = serve(t, &upstream{status: 200, body: string(answer)}, voyage.Routes)
	out, err = call(t, c, "rerank", rerankPlain)
	if err != nil || bytes.Contains(out, []byte(`"document"`)) || !bytes.Contains(out, []byte(`"results":[{"index":1,"relevance_score":0.92578125}`)) {
		t.Errorf("got %s (%v), want Voyage's results without documents", out, err)
	}
}

// The faults of every wire: a rate limit (with its Retry-After), a failing server, a
// refused key and a refused request whose bodies quote the key (masked), a 200 that is not
// JSON or not the wire's answer, an answer ranking a document that does not exist.
func TestFaults(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			tests := []struct {
				name   string
				status int
				header http.Header
				body   string
				kind   llm.Kind
				retry  time.Duration
				msg    string
			}{
				{"429", 429, http.Header{"Retry-After": {"7"}}, w.errorBody, llm.RateLimited, 7 * time.Second, "HTTP 429"},
				{"500", 500, nil, w.errorBody, llm.Unavailable, 0, "HTTP 500"},
				{"401", 401, nil, w.errorBody, llm.Auth, 0, "refused the gateway's credentials"},
				{"400", 400, nil, w.errorBody, llm.Invalid, 0, "[MASKED]"},
				{"502 page", 502, http.Header{"Content-Type": {"text/html"}}, "<html>bad gateway</html>", llm.Unavailable, 0, "Bad Gateway"},
				{"200 not JSON", 200, http.Header{"Content-Type": {"text/plain"}}, "upstream says hi", llm.Unavailable, 0, "something other than its wire's answer"},
				{"200 not the wire's", 200, nil, `{"ok":true}`, llm.Unavailable, 0, "something other than its wire's answer"},
				{"200 no such document", 200, nil, map[string]string{
					"cohere": `{"id":"x","results":[{"index":9,"relevance_score":0.5}],"meta":{}}`,
					"jina":   `{"model":"m","results":[{"index":9,"relevance_score":0.5}],"usage":{"total_tokens":1}}`,
					"voyage": `{"object":"list","data":[{"index":9,"relevance_score":0.5}],"model":"m","usage":{"total_tokens":1}}`,
				}[w.name], llm.Unavailable, 0, "ranks document 9 of 2"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					c := serve(t, &upstream{status: tt.status, header: tt.header, body: tt.body}, w.routes)
					_, err := call(t, c, "rerank", rerankPlain)
					var e *llm.Error
					if !errors.As(err, &e) || e.Kind != tt.kind || e.RetryAfter != tt.retry {
						t.Fatalf("got %#v, want kind %v, retry %v", err, tt.kind, tt.retry)
					}
					if strings.Contains(e.Message, key) || strings.Contains(e.Message, key[3:]) || !strings.Contains(e.Message, tt.msg) {
						t.Errorf("got message %q, want it to hold %q and never the key", e.Message, tt.msg)
					}
					if !strings.HasPrefix(e.Message, "prov") && tt.kind != llm.Invalid {
						t.Errorf("got message %q, want it to name the provider", e.Message)
					}
				})
			}
		})
	}
}

// A request the provider cannot take is the client's 400 and is never sent; a chat request,
// a path the provider does not serve, and an upstream that does not answer are errors too,
// never a panic.
func TestRefusals(t *testing.T) {
	u := &upstream{status: 200, body: `{}`}
	c := serve(t, u, cohere.Routes)
	if _, err := call(t, c, "embeddings", `{"model":"e","input":[[1,2,3]]}`); llm.KindOf(err) != llm.Invalid || u.got != nil {
		t.Errorf("token input to Cohere: got %v, sent %s; want Invalid, nothing sent", err, u.got)
	}
	if _, err := c.Plain(context.Background(), "moderations", "m", []byte(`{"input":"x"}`)); llm.KindOf(err) != llm.Invalid {
		t.Errorf("moderations on Cohere: got %v, want Invalid", err)
	}
	if _, err := c.Stream(context.Background(), &llm.Request{Model: "command-a"}); llm.KindOf(err) != llm.Invalid || llm.HTTPStatus(err) != 400 {
		t.Errorf("chat on Cohere: got %v, want a 400", err)
	}
	if c.Serves("moderations") || !c.Serves("rerank") {
		t.Errorf("Serves: want rerank only of these")
	}
	dead := retrieval.New(retrieval.Config{Name: "prov", BaseURL: "http://127.0.0.1:1", APIKey: key, Routes: voyage.Routes})
	if _, err := dead.Plain(context.Background(), "rerank", "m", []byte(rerankPlain)); llm.KindOf(err) != llm.Unavailable {
		t.Errorf("no upstream: got %v, want Unavailable", err)
	}
}

// The error bodies of the providers and of proxies before them.
func TestErrorMessage(t *testing.T) {
	tests := map[string]string{
		`{"id":"x","message":"invalid api token"}`:                                      "invalid api token",
		`{"detail":"Provided API key is invalid."}`:                                     "Provided API key is invalid.",
		`{"detail":[{"loc":["body","query"],"msg":"field required","type":"missing"}]}`: "field required",
		`{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}`:      "Incorrect API key",
		`{"error":"upstream timeout"}`:                                                  "upstream timeout",
		`{"detail":{"message":"quota exceeded"}}`:                                       "quota exceeded",
		`{"ok":true}`: "",
		`not json`:    "",
	}
	for body, want := range tests {
		if got := retrieval.ErrorMessage([]byte(body)); got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
}

// Cohere's float vectors reach a client that asked for base64 (the OpenAI SDKs' default) as
// OpenAI encodes them: little-endian float32s.
func TestCohereBase64(t *testing.T) {
	answer, _ := os.ReadFile("testdata/cohere-embeddings.answer.json")
	c := serve(t, &upstream{status: 200, body: string(answer)}, cohere.Routes)
	out, err := call(t, c, "embeddings", `{"model":"e","input":["hello","goodbye"],"encoding_format":"base64"}`)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Data []struct{ Embedding string }
	}
	if err := json.Unmarshal(out, &l); err != nil || len(l.Data) != 2 {
		t.Fatalf("got %s (%v), want two base64 vectors", out, err)
	}
	b, err := base64.StdEncoding.DecodeString(l.Data[1].Embedding)
	if err != nil || len(b) != 12 || math.Float32frombits(binary.LittleEndian.Uint32(b[4:])) != 0.0060157776 {
		t.Errorf("got %q, want the second vector's float32s", l.Data[1].Embedding)
	}
}

// Voyage's documents, with return_documents, are strings: the client gets them as texts.
func TestVoyageDocuments(t *testing.T) {
	c := serve(t, &upstream{status: 200, body: `{"object":"list","data":[{"relevance_score":0.9,"index":1,"document":"Paris (Voyage's copy)"}],"model":"rerank-2.5","usage":{"total_tokens":9}}`}, voyage.Routes)
	out, err := call(t, c, "rerank", rerankBody)
	if err != nil || !bytes.Contains(out, []byte(`"document":{"text":"Paris (Voyage's copy)"}`)) {
		t.Errorf("got %s (%v), want Voyage's document as its text", out, err)
	}
}

// The routes' translations never panic, whatever the client's body and the upstream's
// answer: an error or an answer.
func FuzzRoutes(f *testing.F) {
	for _, s := range []string{rerankBody, rerankPlain, embeddingBody, `{"documents":[1,{"text":null}]}`, `[]`, `{"input":[[1]]}`} {
		f.Add(s, `{"results":[{"index":0}],"data":[{"index":1,"document":"x"}],"embeddings":{"float":[[1]]}}`)
	}
	f.Fuzz(func(t *testing.T, body, answer string) {
		for _, w := range wires {
			for _, r := range w.routes {
				r.Request("m", []byte(body))
				r.Answer("m", []byte(body), []byte(answer))
			}
		}
		retrieval.ErrorMessage([]byte(answer))
	})
}
