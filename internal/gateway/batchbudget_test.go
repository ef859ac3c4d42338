package gateway_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/usage"
)

// batchKey is the virtual key of TestEmulatedBatchHoldsBudget: $0.001 a day.
const batchKey = "batch-budget-key-Zx8cV2bN"

// An emulated batch (batch: emulate) holds its estimate against its key's daily budget B
// from its creation (issue 48): with an estimate of 0.6B a second batch is refused at once,
// while the first's lines still run; its lines run within the hold through the chain, each
// charged once at the target's price; when it completes the rest of the hold is freed, so
// a new batch fits. The account holds the lines' cost to the nano-USD.
func TestEmulatedBatchHoldsBudget(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream") // the adapter streams every call
		const chunk = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[`
		io.WriteString(w, chunk+`{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}`+"\n\n"+
			chunk+`{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
			chunk+`],"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	sum := sha256.Sum256([]byte(batchKey))
	g := serve(t, `
auth: {admin_token: `+adminToken+`}
keys: [{name: batcher, hash: `+hex.EncodeToString(sum[:])+`, budget: {daily_usd: 0.001}}]
providers:
  a: {kind: openai, base_url: "${A}/v1", api_key: sk-test-a}
prices:
  a/m: {input: 2, output: 8}
models:
  emu: {targets: [a/m], batch: emulate, batch_rate: 1000}
`, map[string]string{"A": up.URL}, io.Discard)
	do := func(method, path, ctype string, body io.Reader) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, g.URL+path, body)
		req.Header.Set("Authorization", "Bearer "+batchKey)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return res.StatusCode, m
	}
	// 3 lines of 400 bytes: 300 tokens at $2 per million, an estimate of 600,000 nano-USD.
	var in strings.Builder
	for i := range 3 {
		line := fmt.Sprintf(`{"custom_id":"c%d","method":"POST","url":"/v1/chat/completions","body":{"model":"emu","messages":[{"role":"user","content":"`, i)
		in.WriteString(line + strings.Repeat("x", 400-len(line)-6) + `"}]}}` + "\n")
	}
	if in.Len() != 1200 {
		t.Fatalf("input of %d bytes", in.Len())
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	io.WriteString(fw, in.String())
	mw.WriteField("purpose", "batch")
	mw.Close()
	st, f := do("POST", "/v1/files?model=emu", mw.FormDataContentType(), &body)
	if st != 200 {
		t.Fatalf("upload: %d %v", st, f)
	}
	create := func() (int, map[string]any) {
		return do("POST", "/v1/batches", "application/json", strings.NewReader(`{"input_file_id":"`+f["id"].(string)+
			`","endpoint":"/v1/chat/completions","completion_window":"24h"}`))
	}
	st, first := create()
	if st != 200 {
		t.Fatalf("first batch: %d %v", st, first)
	}
	if st, second := create(); st != 429 || !strings.Contains(fmt.Sprint(second), "budget_exceeded") {
		t.Errorf("second batch while the first holds 0.6B: %d %v, want 429 budget_exceeded", st, second)
	}
	close(release)
	released = true
	b := first
	for deadline := time.Now().Add(60 * time.Second); b["status"] != "completed" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, b = do("GET", "/v1/batches/"+first["id"].(string), "", nil)
	}
	if b["status"] != "completed" {
		t.Fatalf("the first batch: %v, want completed", b)
	}
	if ef, _ := b["error_file_id"].(string); ef != "" {
		req, _ := http.NewRequest("GET", g.URL+"/v1/files/"+ef+"/content", nil)
		req.Header.Set("Authorization", "Bearer "+batchKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("the first batch's lines failed: %s", e)
	}
	// Each line: 20 tokens at $2 and 5 at $8 per million, 80,000 nano-USD; once each.
	if got := usage.Nano(chargedByTarget(t, g.URL, 3)["a/m"]); got != 240_000 {
		t.Errorf("the lines cost %d nano-USD in the account, want 240000", got)
	}
	if st, third := create(); st != 200 {
		t.Errorf("a batch once the first completed: %d %v, want 200 (240000 spent + 600000 fit in 1000000)", st, third)
	}
}
