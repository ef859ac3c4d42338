package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/server"
)

// The embedded default's batch-sim alias runs a batch to completed, each line through the
// gateway's own handler and chain (sim answers), as make run does; the request log has a
// record of each line, with the user agent sluice-batch.
func TestEmulatedBatchDefault(t *testing.T) {
	t.Chdir(t.TempDir()) // the default's request log, data/logs.db, is written there
	c := config.Default()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := New(c, log)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			srv.Close()
		}
	}()
	var g server.Gate
	em, err := emulatedFromConfig(c, &g, nil, nil, log)
	if err != nil || em == nil {
		t.Fatalf("emulated: %v, %v", em, err)
	}
	defer em.Close()
	em.runner.Poll = 5 * time.Millisecond
	em.runner.Start(srv)
	h, ok := em.Host("batch-sim")
	if !ok {
		t.Fatal("no host for batch-sim")
	}
	var in strings.Builder
	for i := range 12 {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"batch-sim","messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, i)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	_, _ = fw.Write([]byte(in.String()))
	_ = mw.Close()
	ctx := context.Background()
	var f, b struct {
		ID, Status   string
		OutputFileID string `json:"output_file_id"`
	}
	get := func(call llm.ObjectCall, v any) {
		t.Helper()
		a, err := h.Object(ctx, call)
		if err != nil {
			t.Fatalf("%s %s: %v", call.Method, call.Path, err)
		}
		defer a.Body.Close()
		raw, _ := io.ReadAll(a.Body)
		if p, ok := v.(*[]byte); ok {
			*p = raw
			return
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	get(llm.ObjectCall{Method: "POST", Path: "files", ContentType: mw.FormDataContentType(), Body: &body, Length: -1}, &f)
	get(llm.ObjectCall{Method: "POST", Path: "batches", Body: strings.NewReader(`{"input_file_id":"` + f.ID +
		`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)}, &b)
	deadline := time.Now().Add(60 * time.Second)
	for b.Status != "completed" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		get(llm.ObjectCall{Method: "GET", Path: "batches/" + b.ID}, &b)
	}
	if b.Status != "completed" || b.OutputFileID == "" {
		t.Fatalf("batch: got %+v, want completed with an output file", b)
	}
	var out []byte
	get(llm.ObjectCall{Method: "GET", Path: "files/" + b.OutputFileID + "/content"}, &out)
	if n := strings.Count(string(out), `"status_code":200`); n != 12 {
		t.Errorf("output: got %d lines answered 200, want 12:\n%s", n, out)
	}
	if !strings.Contains(string(out), `"object":"chat.completion"`) {
		t.Errorf("output: want chat completions, got\n%.500s", out)
	}
	// The request log: srv.Close writes what it holds.
	em.Close()
	srv.Close()
	closed = true
	st, err := logstore.Open(ctx, logstore.Options{URL: c.Logs.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.Query(ctx, logstore.Filter{Alias: "batch-sim", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, r := range p.Records {
		if r.Method == "POST" && r.Path == "/v1/chat/completions" && r.UserAgent == "sluice-batch" && r.Status == 200 {
			lines++
		}
	}
	if lines != 12 {
		t.Errorf("the request log: %d records of the lines with user agent sluice-batch, want 12, in %d records", lines, len(p.Records))
	}
}
