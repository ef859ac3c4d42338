package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/server"
)

// batchInput is the upload (multipart, purpose batch) of an input file of n chat lines of
// batch-sim, custom ids r0 to r(n-1), and its content type.
func batchInput(n int) (*bytes.Buffer, string) {
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"batch-sim","messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, i)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	_, _ = fw.Write([]byte(in.String()))
	_ = mw.Close()
	return &body, mw.FormDataContentType()
}

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
	body, ctype := batchInput(12)
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
	get(llm.ObjectCall{Method: "POST", Path: "files", ContentType: ctype, Body: body, Length: -1}, &f)
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

// Without Redis, the default's emulated batches live in the request log's SQLite file: a
// batch created over HTTP on one gateway, which is closed midway (a restart), is found by
// the next gateway on the same folder (the object's owner and the batch's progress), which
// runs it to completed, each line answered once. The lines the first one held run once its
// parts' lease (30 s) lapses.
func TestEmulatedBatchRestart(t *testing.T) {
	t.Chdir(t.TempDir())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := config.Default()
	a := c.Models["batch-sim"]
	a.BatchRate = 20
	c.Models["batch-sim"] = a
	srv, err := New(c, log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Close() }()
	do := func(method, path, ctype string, body io.Reader, v any) {
		t.Helper()
		r := httptest.NewRequest(method, path, body)
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		if p, ok := v.(*[]byte); ok {
			*p = w.Body.Bytes()
		} else if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
			t.Fatal(err)
		}
	}
	const n = 80
	body, ctype := batchInput(n)
	type batchObj struct {
		ID, Status    string
		OutputFileID  string                                 `json:"output_file_id"`
		RequestCounts struct{ Total, Completed, Failed int } `json:"request_counts"`
	}
	var f, b batchObj
	do("POST", "/v1/files?model=batch-sim", ctype, body, &f)
	do("POST", "/v1/batches", "application/json", strings.NewReader(`{"input_file_id":"`+f.ID+
		`","endpoint":"/v1/chat/completions","completion_window":"24h"}`), &b)
	await := func(done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("batch: got %+v after 90s", b)
			}
			do("GET", "/v1/batches/"+b.ID, "", nil, &b)
		}
	}
	await(func() bool { return b.RequestCounts.Completed >= 10 })
	if err := srv.Close(); err != nil { // the runner stops, then the log closes
		t.Fatal(err)
	}
	before := b.RequestCounts.Completed
	if srv, err = New(c, log); err != nil {
		t.Fatal(err)
	}
	do("GET", "/v1/batches/"+b.ID, "", nil, &b)
	if b.RequestCounts.Completed < before || b.Status == "completed" {
		t.Fatalf("after the restart: got %+v, want in progress with at least the %d lines answered before", b, before)
	}
	await(func() bool { return b.Status == "completed" })
	var out []byte
	do("GET", "/v1/files/"+b.OutputFileID+"/content", "", nil, &out)
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			CustomID string `json:"custom_id"`
			Response struct {
				StatusCode int `json:"status_code"`
			}
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Response.StatusCode != 200 || seen[r.CustomID] {
			t.Errorf("output line %s: %v (seen before: %v)", l, err, seen[r.CustomID])
		}
		seen[r.CustomID] = true
	}
	if len(seen) != n || b.RequestCounts.Total != n || b.RequestCounts.Completed != n {
		t.Errorf("got %d lines answered, counts %+v; want %d", len(seen), b.RequestCounts, n)
	}
}
