package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
	"github.com/sluice-gw/sluice/internal/schema/rerank"
)

// rerankCreds sign the rerank tests' calls; the failing upstream quotes the session token.
var rerankCreds = aws.Credentials{AccessKeyID: "AKIDRERANKTEST", SecretAccessKey: "rerank-SECRET-key", SessionToken: "rerank-session-TOKEN"}

// agentRuntime is an httptest Agents for Amazon Bedrock Runtime endpoint: POST /rerank,
// signed for us-west-2 (checked as Bedrock does), answering the pages queued in answers
// (status, body), the last repeated. It records the bodies it got.
type agentRuntime struct {
	mu      sync.Mutex
	answers [][2]string
	bodies  []string
	errs    []string
}

func (a *agentRuntime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bodies = append(a.bodies, string(body))
	w.Header().Set("Content-Type", "application/json")
	if err := bedrocktest.VerifySigV4(r, body, rerankCreds, "us-west-2", time.Now()); err != nil || r.Method != "POST" || r.URL.Path != "/rerank" {
		a.errs = append(a.errs, fmt.Sprint(r.Method, " ", r.URL.Path, ": ", err))
		w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"message":"The request signature we calculated does not match the signature you provided."}`)
		return
	}
	ans := a.answers[0]
	if len(a.answers) > 1 {
		a.answers = a.answers[1:]
	}
	if ans[0] != "200" {
		w.Header().Set("X-Amzn-Errortype", "InternalServerException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.WriteHeader(map[string]int{"500": 500, "429": 429, "400": 400}[ans[0]])
	}
	io.WriteString(w, strings.ReplaceAll(ans[1], "%s", r.Header.Get("X-Amz-Security-Token")))
}

// rerankClient is a client of a's endpoint, signing with rerankCreds.
func rerankClient(t *testing.T, a *agentRuntime) *Client {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return New(Config{Name: "br", Region: "us-west-2", BaseURL: srv.URL,
		Credentials: credentials.NewStaticCredentialsProvider(rerankCreds.AccessKeyID, rerankCreds.SecretAccessKey, rerankCreds.SessionToken)})
}

const rerankBody = `{"model":"rr","query":"capital of France","documents":["Berlin is the capital of Germany.",{"text":"Paris is the capital of France."},"Madrid is in Spain."],"top_n":2,"return_documents":true,"max_tokens_per_doc":512}`

// The Rerank API's request as AWS documents it (one TEXT query, INLINE TEXT sources, the
// foundation model's ARN in the region, numberOfResults from top_n, the model's own field),
// signed with SigV4; its answer, over two pages (nextToken sent back), in the client's shape:
// results best first with the documents asked for, and one search unit billed.
func TestRerank(t *testing.T) {
	a := &agentRuntime{answers: [][2]string{
		{"200", `{"results":[{"index":1,"relevanceScore":0.91}],"nextToken":"page-2"}`},
		{"200", `{"results":[{"index":0,"relevanceScore":0.12}]}`},
	}}
	c := rerankClient(t, a)
	out, err := c.Plain(context.Background(), "rerank", "cohere.rerank-v3-5:0", []byte(rerankBody))
	if err != nil {
		t.Fatalf("%v (upstream: %v)", err, a.errs)
	}
	var want, got map[string]any
	json.Unmarshal([]byte(`{"model":"cohere.rerank-v3-5:0","results":[
		{"index":1,"relevance_score":0.91,"document":{"text":"Paris is the capital of France."}},
		{"index":0,"relevance_score":0.12,"document":{"text":"Berlin is the capital of Germany."}}],
		"meta":{"billed_units":{"search_units":1}}}`), &want)
	if err := json.Unmarshal(out, &got); err != nil || !jsonEqual(got, want) {
		t.Errorf("answer %s", out)
	}
	if len(a.bodies) != 2 {
		t.Fatalf("%d calls, want 2 (two pages)", len(a.bodies))
	}
	json.Unmarshal([]byte(`{"queries":[{"type":"TEXT","textQuery":{"text":"capital of France"}}],
		"sources":[
			{"type":"INLINE","inlineDocumentSource":{"type":"TEXT","textDocument":{"text":"Berlin is the capital of Germany."}}},
			{"type":"INLINE","inlineDocumentSource":{"type":"TEXT","textDocument":{"text":"Paris is the capital of France."}}},
			{"type":"INLINE","inlineDocumentSource":{"type":"TEXT","textDocument":{"text":"Madrid is in Spain."}}}],
		"rerankingConfiguration":{"type":"BEDROCK_RERANKING_MODEL","bedrockRerankingConfiguration":{"numberOfResults":2,
			"modelConfiguration":{"modelArn":"arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0",
				"additionalModelRequestFields":{"max_tokens_per_doc":512}}}}}`), &want)
	if json.Unmarshal([]byte(a.bodies[0]), &got) != nil || !jsonEqual(got, want) {
		t.Errorf("first page's request %s", a.bodies[0])
	}
	want["nextToken"] = "page-2"
	if json.Unmarshal([]byte(a.bodies[1]), &got) != nil || !jsonEqual(got, want) {
		t.Errorf("second page's request %s, want the first with nextToken", a.bodies[1])
	}
	if got := (&Client{region: "cn-north-1"}).modelARN("amazon.rerank-v1:0"); got != "arn:aws-cn:bedrock:cn-north-1::foundation-model/amazon.rerank-v1:0" {
		t.Errorf("China's ARN %s", got)
	}
	if arn := "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"; c.modelARN(arn) != arn {
		t.Error("an ARN is not kept")
	}
}

// Faults: an upstream failing (500 quoting the session token) is Unavailable, with neither
// the session token nor the secret in its words; an answer that is not the Rerank API's, or
// that ranks a document the request did not hold, is Unavailable (the chain falls back); a
// throttle is RateLimited; a body the wire cannot take and another path are Invalid.
func TestRerankFaults(t *testing.T) {
	tests := []struct {
		name, status, answer string
		kind                 llm.Kind
	}{
		{"500", "500", `{"message":"internal failure for token %s"}`, llm.Unavailable},
		{"429", "429", `{"message":"Too many requests, please wait before trying again."}`, llm.RateLimited},
		{"not JSON", "200", `<html>gateway timeout</html>`, llm.Unavailable},
		{"no results", "200", `{"nextToken":""}`, llm.Unavailable},
		{"index out of range", "200", `{"results":[{"index":7,"relevanceScore":0.5}]}`, llm.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rerankClient(t, &agentRuntime{answers: [][2]string{{tt.status, tt.answer}}})
			_, err := c.Plain(context.Background(), "rerank", "amazon.rerank-v1:0", []byte(rerankBody))
			var e *llm.Error
			if !errorsAs(err, &e) || e.Kind != tt.kind {
				t.Fatalf("got %v, want kind %v", err, tt.kind)
			}
			for _, secret := range []string{rerankCreds.SessionToken, rerankCreds.SecretAccessKey} {
				if strings.Contains(e.Error(), secret) || strings.Contains(e.Message, secret) {
					t.Errorf("the error shows a credential: %s", e.Message)
				}
			}
		})
	}
	c := rerankClient(t, &agentRuntime{answers: [][2]string{{"200", `{"results":[]}`}}})
	for _, call := range [][2]string{{"embeddings", rerankBody}, {"rerank", `{"query":"q","documents":[7]}`}} {
		_, err := c.Plain(context.Background(), call[0], "amazon.rerank-v1:0", []byte(call[1]))
		var e *llm.Error
		if !errorsAs(err, &e) || e.Kind != llm.Invalid {
			t.Errorf("%s %s: got %v, want Invalid", call[0], call[1], err)
		}
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// FuzzRerankAnswer feeds arbitrary 200 answers to the rerank call: it never panics, and
// either answers in the client's shape, every index one of the request's three documents,
// or fails Unavailable, so the chain falls back.
func FuzzRerankAnswer(f *testing.F) {
	f.Add(`{"results":[{"index":1,"relevanceScore":0.91},{"index":0,"relevanceScore":0.12}]}`)
	f.Add(`{"results":[{"index":1,"relevanceScore":0.91}],"nextToken":"p2"}`)
	f.Add(`{"results":[{"index":-1,"relevanceScore":1e308}]}`)
	f.Add(`{"results":null}`)
	f.Add(`[]`)
	var answer atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, answer.Load().(string))
	}))
	f.Cleanup(srv.Close)
	c := New(Config{Name: "br", Region: "us-west-2", BaseURL: srv.URL, APIKey: "br-key"})
	f.Fuzz(func(t *testing.T, s string) {
		answer.Store(s)
		out, err := c.Plain(context.Background(), "rerank", "amazon.rerank-v1:0", []byte(rerankBody))
		if err != nil {
			var e *llm.Error
			if !errorsAs(err, &e) || e.Kind != llm.Unavailable {
				t.Fatalf("got %v, want Unavailable", err)
			}
			return
		}
		var a rerank.Answer
		if err := json.Unmarshal(out, &a); err != nil || a.Results == nil {
			t.Fatalf("answer %s", out)
		}
		for _, res := range a.Results {
			if res.Index < 0 || res.Index > 2 || res.Document == nil || res.Document.Text == nil {
				t.Fatalf("result %+v", res)
			}
		}
	})
}
