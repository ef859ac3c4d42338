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
	"sync/atomic"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/schema/rerank"
)

// rankPath is the ranking API's method for project proj.
const rankPath = "/v1/projects/proj/locations/global/rankingConfigs/default_ranking_config:rank"

// ranker is an httptest Discovery Engine endpoint: the rank method behind the bearer
// token, scoring each record by answer (its content's score), or failing with status and
// a google.rpc.Status quoting the token. It records the bodies it got.
type ranker struct {
	mu     sync.Mutex
	status int
	answer func(records []rankRecord) string
	bodies []string
}

func (k *ranker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.bodies = append(k.bodies, string(b))
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+token || r.Method != "POST" || r.URL.Path != rankPath {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	if k.status != 200 {
		w.WriteHeader(k.status)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":"backend failed for %s","status":"INTERNAL"}}`, k.status, r.Header.Get("Authorization"))
		return
	}
	var req rankRequest
	json.Unmarshal(b, &req)
	io.WriteString(w, k.answer(req.Records))
}

// rankClient is a Vertex AI client whose endpoint is k's.
func rankClient(t testing.TB, k *ranker) *Client {
	t.Helper()
	srv := httptest.NewServer(k)
	t.Cleanup(srv.Close)
	return New(Config{Endpoint: srv.URL, Project: "proj", Location: "us-east5",
		Token: func(context.Context) (string, error) { return token, nil }})
}

// byLength scores each record by the length of its content, best first, as the ranking
// API answers with ignoreRecordDetailsInResponse: ids and scores only.
func byLength(records []rankRecord) string {
	var out []string
	for _, r := range records {
		out = append(out, fmt.Sprintf(`{"id":%q,"score":%g}`, r.ID, float64(len(r.Content))/1000))
	}
	return `{"records":[` + strings.Join(out, ",") + `]}`
}

// The ranking API's request as Google documents it (the model, the query, records with ids
// and contents, topN, no record details back) on the project's global ranking config, with
// the bearer token; the answer in the client's shape, with the documents asked for, and the
// search units of 100 records each. 250 documents are ranked in two calls (200, 50), their
// results merged best first and cut to top_n.
func TestRank(t *testing.T) {
	k := &ranker{status: 200, answer: byLength}
	c := rankClient(t, k)
	out, err := c.Plain(context.Background(), "rerank", "semantic-ranker-default@latest",
		[]byte(`{"model":"rr","query":"capital of France","documents":["Berlin.",{"text":"Paris is the capital."},"Rome"],"top_n":2,"return_documents":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"semantic-ranker-default@latest","results":[{"index":1,"relevance_score":0.021,"document":{"text":"Paris is the capital."}},` +
		`{"index":0,"relevance_score":0.007,"document":{"text":"Berlin."}}],"meta":{"billed_units":{"search_units":1}}}`
	if string(out) != want {
		t.Errorf("answer %s\nwant   %s", out, want)
	}
	wantReq := `{"model":"semantic-ranker-default@latest","query":"capital of France","records":[{"id":"0","content":"Berlin."},` +
		`{"id":"1","content":"Paris is the capital."},{"id":"2","content":"Rome"}],"topN":2,"ignoreRecordDetailsInResponse":true}`
	if len(k.bodies) != 1 || k.bodies[0] != wantReq {
		t.Errorf("requests %q\nwant %s", k.bodies, wantReq)
	}

	k.bodies = nil
	docs := make([]string, 250)
	for i := range docs {
		docs[i] = fmt.Sprintf("%q", strings.Repeat("x", i+1)) // document i scores (i+1)/1000
	}
	out, err = c.Plain(context.Background(), "rerank", "semantic-ranker-fast-004",
		[]byte(`{"model":"rr","query":"q","documents":[`+strings.Join(docs, ",")+`],"top_n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	want = `{"model":"semantic-ranker-fast-004","results":[{"index":249,"relevance_score":0.25},{"index":248,"relevance_score":0.249},` +
		`{"index":247,"relevance_score":0.248}],"meta":{"billed_units":{"search_units":3}}}`
	if string(out) != want {
		t.Errorf("250 documents: %s\nwant %s", out, want)
	}
	var sizes []int
	for _, b := range k.bodies {
		var req rankRequest
		json.Unmarshal([]byte(b), &req)
		if req.TopN != 0 {
			t.Errorf("a part's call asks for topN %d: the cut is over all parts", req.TopN)
		}
		sizes = append(sizes, len(req.Records))
	}
	if fmt.Sprint(sizes) != "[200 50]" {
		t.Errorf("calls of %v records, want [200 50]", sizes)
	}
}

// Faults: a 500 quoting the token is Unavailable without the token; a 403 is Auth; an
// answer that is not the ranking API's (not JSON, no records, an id that is no document's,
// a record without a score) is Unavailable, so the chain falls back; another path or a body
// the wire cannot take is Invalid; a token that cannot be had is Auth.
func TestRankFaults(t *testing.T) {
	tests := []struct {
		name   string
		status int
		answer string
		kind   llm.Kind
	}{
		{"500", 500, "", llm.Unavailable},
		{"403", 403, "", llm.Auth},
		{"not JSON", 200, `<html>502</html>`, llm.Unavailable},
		{"no records", 200, `{}`, llm.Unavailable},
		{"unknown id", 200, `{"records":[{"id":"9","score":0.5}]}`, llm.Unavailable},
		{"no score", 200, `{"records":[{"id":"0"}]}`, llm.Unavailable},
	}
	body := []byte(`{"model":"rr","query":"q","documents":["a","b"]}`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rankClient(t, &ranker{status: tt.status, answer: func([]rankRecord) string { return tt.answer }})
			_, err := c.Plain(context.Background(), "rerank", "semantic-ranker-default@latest", body)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.kind {
				t.Fatalf("got %v, want kind %v", err, tt.kind)
			}
			if strings.Contains(e.Message, token) {
				t.Errorf("the error shows the token: %s", e.Message)
			}
		})
	}
	c := rankClient(t, &ranker{status: 200, answer: byLength})
	for _, call := range [][2]string{{"embeddings", string(body)}, {"rerank", `{"query":"q","documents":[{"title":"t"}]}`}} {
		_, err := c.Plain(context.Background(), call[0], "semantic-ranker-default@latest", []byte(call[1]))
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Invalid {
			t.Errorf("%s %s: got %v, want Invalid", call[0], call[1], err)
		}
	}
	c.token = func(context.Context) (string, error) { return "", errors.New("metadata server unreachable") }
	c.google = New(Config{Endpoint: "http://127.0.0.1:1", Project: "proj", Location: "us-east5", Token: c.token}).google
	var e *llm.Error
	if _, err := c.Plain(context.Background(), "rerank", "m", body); !errors.As(err, &e) || e.Kind != llm.Auth {
		t.Errorf("no token: got %v, want Auth", err)
	}
}

// FuzzRankAnswer feeds arbitrary 200 answers to the rank call: it never panics, and either
// answers in the client's shape, every index one of the request's two documents, at most
// top_n of them, or fails Unavailable, so the chain falls back.
func FuzzRankAnswer(f *testing.F) {
	f.Add(`{"records":[{"id":"1","score":0.97},{"id":"0","score":0.02}]}`)
	f.Add(`{"records":[{"id":"01","score":-1}]}`)
	f.Add(`{"records":[{"id":"-1","score":0.5}]}`)
	f.Add(`{"records":[]}`)
	f.Add(`{"records":[{"id":"x"}]}`)
	var answer atomic.Value
	c := rankClient(f, &ranker{status: 200, answer: func([]rankRecord) string { return answer.Load().(string) }})
	f.Fuzz(func(t *testing.T, s string) {
		answer.Store(s)
		out, err := c.Plain(context.Background(), "rerank", "semantic-ranker-default@latest",
			[]byte(`{"model":"rr","query":"q","documents":["a","b"],"top_n":1}`))
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Unavailable {
				t.Fatalf("got %v, want Unavailable", err)
			}
			return
		}
		var a rerank.Answer
		if err := json.Unmarshal(out, &a); err != nil || a.Results == nil || len(a.Results) > 1 {
			t.Fatalf("answer %s", out)
		}
		for _, res := range a.Results {
			if res.Index < 0 || res.Index > 1 {
				t.Fatalf("result %+v", res)
			}
		}
	})
}
