package server_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The rerankers' kinds (issue 48) through the gateway's /v1/rerank: a Cohere target that is
// rate limited (its body quoting the key) falls back to a Voyage one, whose answer reaches
// the client in the Cohere/Jina shape; the record holds both attempts and the cost of
// Voyage's tokens from the price table. A direct Cohere target that refuses the request
// with the key quoted is the client's 400, the key masked; a chat request to it is a 400.
func TestRerankCohereToVoyage(t *testing.T) {
	co := &plainUpstream{status: http.StatusTooManyRequests}
	vo := &plainUpstream{status: http.StatusOK,
		answer: `{"object":"list","data":[{"relevance_score":0.92578125,"index":1},{"relevance_score":0.265625,"index":0}],"model":"rerank-2.5","usage":{"total_tokens":26}}`}
	cs, vs := httptest.NewServer(co), httptest.NewServer(vo)
	t.Cleanup(cs.Close)
	t.Cleanup(vs.Close)
	url := serveGate(t, logsYAML("sqlite://"+t.TempDir()+"/logs.db",
		`  co: {kind: cohere, base_url: "${CO_URL}", api_key: "${KEY}"}
  vo: {kind: voyage, base_url: "${VO_URL}/v1", api_key: "${KEY}"}
`, "rerank:\n  rr: [co/rerank-v3.5, vo/rerank-2.5]\n"),
		map[string]string{"CO_URL": cs.URL, "VO_URL": vs.URL, "KEY": plainKey}, time.Minute, nil)
	_, key := createKey(t, url, logsAdmin, `{"name":"rerankers"}`)

	const body = `{"model":"rr","query":"capital of France","documents":["Berlin is the capital of Germany.",{"text":"Paris is the capital of France."}],"top_n":2,"return_documents":true}`
	r := do(t, "POST", url+"/v1/rerank", key, body)
	const want = `{"model":"rerank-2.5","results":[{"index":1,"relevance_score":0.92578125,"document":{"text":"Paris is the capital of France."}},` +
		`{"index":0,"relevance_score":0.265625,"document":{"text":"Berlin is the capital of Germany."}}],"usage":{"prompt_tokens":26,"total_tokens":26}}`
	if r.status != http.StatusOK || string(r.body) != want {
		t.Fatalf("got %d %s, want Voyage's answer in the Cohere/Jina shape", r.status, r.body)
	}
	if got := r.header.Get("X-Sluice-Target"); got != "vo/rerank-2.5" {
		t.Errorf("X-Sluice-Target %q, want vo/rerank-2.5", got)
	}
	cc, vc := co.Calls(), vo.Calls()
	if len(cc) != 1 || !strings.HasPrefix(cc[0], "/v2/rerank ") || len(vc) != 1 || !strings.HasPrefix(vc[0], "/v1/rerank ") {
		t.Fatalf("calls cohere %q voyage %q, want one each on their paths", cc, vc)
	}
	var sent map[string]any
	if json.Unmarshal([]byte(strings.SplitN(vc[0], " ", 2)[1]), &sent) != nil || sent["model"] != "rerank-2.5" || sent["top_k"] != 2.0 || sent["top_n"] != nil {
		t.Errorf("voyage got %s, want its own shape (top_k) and its model", vc[0])
	}
	if vo.auth != "Bearer "+plainKey {
		t.Errorf("voyage got Authorization %q, want the provider's key", vo.auth)
	}
	rec := plainWaitRecord(t, url, r.header.Get("X-Request-Id"))
	if rec.Wire != "rerank" || rec.Alias != "rr" || rec.Target != "vo/rerank-2.5" || len(rec.Attempts) != 2 ||
		rec.Attempts[0].Target != "co/rerank-v3.5" || math.Abs(rec.CostUSD-26*0.05/1e6) > 1e-12 {
		t.Errorf("record %+v, want two attempts, the cost of 26 tokens of rerank-2.5", rec)
	}

	co.status = http.StatusBadRequest // its body quotes the key
	r = do(t, "POST", url+"/v1/rerank", key, strings.Replace(body, `"model":"rr"`, `"model":"co/rerank-v3.5"`, 1))
	if r.status != http.StatusBadRequest || bytes.Contains(r.body, []byte(plainKey)) || !bytes.Contains(r.body, []byte(`"error"`)) {
		t.Errorf("a 400 quoting the key: got %d %s, want a 400 with the key masked", r.status, r.body)
	}
	r = do(t, "POST", url+"/v1/chat/completions", key, `{"model":"co/command-a","messages":[{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusBadRequest || !bytes.Contains(r.body, []byte("serves no chat")) {
		t.Errorf("chat on cohere: got %d %s, want a 400 saying it serves no chat", r.status, r.body)
	}
}
