package batch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// stores are the stores every test of the host runs on: memory here, Redis in
// redis_test.go.
var stores = map[string]func(t *testing.T) func() batch.Store{
	"memory": func(t *testing.T) func() batch.Store {
		m, err := batch.NewMemory("")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return func() batch.Store { return m }
	},
}

// eachStore runs fn on every store: newStore returns a connection to one shared store
// (a replica's).
func eachStore(t *testing.T, fn func(t *testing.T, newStore func() batch.Store)) {
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) { fn(t, mk(t)) })
	}
}

var alice = &auth.Key{ID: "key_alice", Name: "alice", Models: []string{"*"}}
var bob = &auth.Key{ID: "key_bob", Name: "bob", Models: []string{"*"}}

func as(k *auth.Key) context.Context { return auth.WithKey(context.Background(), k) }

// call makes one call of the host and decodes its JSON answer into v (nil: none).
func call(t *testing.T, h llm.ObjectHost, ctx context.Context, c llm.ObjectCall, v any) error {
	t.Helper()
	a, err := h.Object(ctx, c)
	if err != nil {
		return err
	}
	defer a.Body.Close()
	b, err := io.ReadAll(a.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v in %s", c.Method, c.Path, err, b)
		}
	}
	return nil
}

func mustCall(t *testing.T, h llm.ObjectHost, ctx context.Context, c llm.ObjectCall, v any) {
	t.Helper()
	if err := call(t, h, ctx, c, v); err != nil {
		t.Fatalf("%s %s: %v", c.Method, c.Path, err)
	}
}

// upload sends content as a multipart upload streamed through a pipe, as the wire does.
func upload(t *testing.T, h llm.ObjectHost, ctx context.Context, purpose, name string, content io.Reader) (map[string]any, error) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("purpose", purpose)
		fw, _ := mw.CreateFormFile("file", name)
		if _, err := io.Copy(fw, content); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(mw.Close())
	}()
	var f map[string]any
	err := call(t, h, ctx, llm.ObjectCall{Method: "POST", Path: "files", ContentType: mw.FormDataContentType(), Body: pr, Length: -1}, &f)
	pr.Close()
	return f, err
}

// content reads a file's content.
func content(t *testing.T, h llm.ObjectHost, ctx context.Context, id string) []byte {
	t.Helper()
	a, err := h.Object(ctx, llm.ObjectCall{Method: "GET", Path: "files/" + id + "/content"})
	if err != nil {
		t.Fatalf("content of %s: %v", id, err)
	}
	defer a.Body.Close()
	b, err := io.ReadAll(a.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pattern is an endless reader of a known sequence of bytes.
type pattern struct{ n int64 }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte('a' + (p.n*7)%26)
		p.n++
	}
	return len(b), nil
}

// A file larger than a chunk is uploaded streamed, listed, read back byte for byte, hidden
// from another key and another alias, and deleted.
func TestFiles(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		size := int64(batch.ChunkSize*2 + 12345)
		f, err := upload(t, h, as(alice), "batch", "in.jsonl", io.LimitReader(&pattern{}, size))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := f["id"].(string)
		if !strings.HasPrefix(id, "file-") || f["object"] != "file" || f["bytes"] != float64(size) || f["purpose"] != "batch" ||
			f["filename"] != "in.jsonl" || f["status"] != "processed" {
			t.Fatalf("upload: got %v", f)
		}
		want, _ := io.ReadAll(io.LimitReader(&pattern{}, size))
		if got := content(t, h, as(alice), id); !bytes.Equal(got, want) {
			t.Fatalf("content: got %d bytes, want the %d uploaded", len(got), len(want))
		}
		var got map[string]any
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "files/" + id}, &got)
		if got["id"] != id || got["bytes"] != float64(size) {
			t.Errorf("get: got %v", got)
		}
		var l struct {
			Object string           `json:"object"`
			Data   []map[string]any `json:"data"`
		}
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "files", Query: url.Values{"purpose": {"batch"}}}, &l)
		if l.Object != "list" || len(l.Data) != 1 || l.Data[0]["id"] != id {
			t.Errorf("list: got %+v, want the file", l)
		}
		mustCall(t, h, as(bob), llm.ObjectCall{Method: "GET", Path: "files"}, &l)
		if len(l.Data) != 0 {
			t.Errorf("list of another key: got %+v, want none", l.Data)
		}
		for _, c := range []struct {
			name string
			h    *batch.Host
			ctx  context.Context
		}{{"another key", h, as(bob)}, {"another alias", &batch.Host{Store: h.Store, Alias: "other"}, as(alice)}} {
			if _, err := h.Object(c.ctx, llm.ObjectCall{Method: "GET", Path: "files/" + id}); c.h == h && llm.KindOf(err) != llm.NotFound {
				t.Errorf("%s: got %v, want NotFound", c.name, err)
			}
			if _, err := c.h.Object(c.ctx, llm.ObjectCall{Method: "GET", Path: "files/" + id + "/content"}); llm.KindOf(err) != llm.NotFound {
				t.Errorf("%s, content: got %v, want NotFound", c.name, err)
			}
		}
		var del map[string]any
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "DELETE", Path: "files/" + id}, &del)
		if del["deleted"] != true || del["id"] != id {
			t.Errorf("delete: got %v", del)
		}
		if _, err := h.Object(as(alice), llm.ObjectCall{Method: "GET", Path: "files/" + id}); llm.HTTPStatus(err) != 404 {
			t.Errorf("get after delete: got %v, want a 404", err)
		}
		if b, err := newStore().Chunk(context.Background(), id, 0); b != nil || err != nil {
			t.Errorf("a chunk after delete: got %d bytes, %v; want none", len(b), err)
		}
	})
}

// Bad input is a 4xx in OpenAI's shape, never a 5xx; a failed upload leaves no file.
func TestBadInput(t *testing.T) {
	m, _ := batch.NewMemory("")
	defer m.Close()
	h := &batch.Host{Store: m, Alias: "sim", MaxBytes: 1000}
	ctx := as(alice)
	statusOf := func(err error) int { return llm.HTTPStatus(err) }
	if _, err := upload(t, h, ctx, "batch", "big.jsonl", io.LimitReader(&pattern{}, 1001)); statusOf(err) != 413 {
		t.Errorf("oversize upload: got %v, want a 413", err)
	}
	if _, err := upload(t, h, ctx, "nonsense", "a.jsonl", strings.NewReader("{}")); statusOf(err) != 400 {
		t.Errorf("unknown purpose: got %v, want a 400", err)
	}
	for _, c := range []struct {
		name string
		c    llm.ObjectCall
		want int
	}{
		{"json body", llm.ObjectCall{Method: "POST", Path: "files", ContentType: "application/json", Body: strings.NewReader("{}")}, 400},
		{"truncated multipart", llm.ObjectCall{Method: "POST", Path: "files", ContentType: "multipart/form-data; boundary=x",
			Body: strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nabc")}, 400},
		{"no file", llm.ObjectCall{Method: "POST", Path: "files", ContentType: "multipart/form-data; boundary=x",
			Body: strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--x--\r\n")}, 400},
		{"unknown file", llm.ObjectCall{Method: "GET", Path: "files/file-nope"}, 404},
		{"unknown batch", llm.ObjectCall{Method: "GET", Path: "batches/batch_nope"}, 404},
		{"cancel unknown", llm.ObjectCall{Method: "POST", Path: "batches/batch_nope/cancel"}, 404},
		{"bad path", llm.ObjectCall{Method: "GET", Path: "files/a/b/c"}, 404},
		{"batch of no json", llm.ObjectCall{Method: "POST", Path: "batches", Body: strings.NewReader("{")}, 400},
		{"batch of no file", llm.ObjectCall{Method: "POST", Path: "batches", Body: strings.NewReader(`{"input_file_id":"file-x","endpoint":"/v1/chat/completions","completion_window":"24h"}`)}, 400},
		{"batch of a bad endpoint", llm.ObjectCall{Method: "POST", Path: "batches", Body: strings.NewReader(`{"input_file_id":"file-x","endpoint":"/v1/nothing","completion_window":"24h"}`)}, 400},
		{"batch of a bad window", llm.ObjectCall{Method: "POST", Path: "batches", Body: strings.NewReader(`{"input_file_id":"file-x","endpoint":"/v1/chat/completions","completion_window":"1h"}`)}, 400},
		{"bad limit", llm.ObjectCall{Method: "GET", Path: "batches", Query: url.Values{"limit": {"0"}}}, 400},
		{"bad order", llm.ObjectCall{Method: "GET", Path: "files", Query: url.Values{"order": {"sideways"}}}, 400},
	} {
		if err := call(t, h, ctx, c.c, nil); statusOf(err) != c.want {
			t.Errorf("%s: got %v (%d), want a %d", c.name, err, statusOf(err), c.want)
		}
	}
	var l struct{ Data []any }
	mustCall(t, h, ctx, llm.ObjectCall{Method: "GET", Path: "files"}, &l)
	if len(l.Data) != 0 {
		t.Errorf("files after failed uploads: got %v, want none", l.Data)
	}
	f, err := upload(t, h, ctx, "user_data", "a.txt", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"input_file_id":%q,"endpoint":"/v1/chat/completions","completion_window":"24h"}`, f["id"])
	if err := call(t, h, ctx, llm.ObjectCall{Method: "POST", Path: "batches", Body: strings.NewReader(body)}, nil); statusOf(err) != 400 {
		t.Errorf("batch of a file whose purpose is not batch: got %v, want a 400", err)
	}
}

// FuzzUpload: whatever the multipart body, an upload answers a file or a 4xx, never a
// panic or a 5xx.
func FuzzUpload(f *testing.F) {
	f.Add("--x\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n{}\r\n--x--\r\n")
	f.Add("--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n")
	f.Add("")
	m, _ := batch.NewMemory("")
	defer m.Close()
	h := &batch.Host{Store: m, Alias: "sim", MaxBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, body string) {
		a, err := h.Object(context.Background(), llm.ObjectCall{Method: "POST", Path: "files",
			ContentType: "multipart/form-data; boundary=x", Body: strings.NewReader(body)})
		if err == nil {
			a.Body.Close()
			return
		}
		if s := llm.HTTPStatus(err); s < 400 || s > 499 {
			t.Fatalf("got %v (%d), want a 4xx", err, s)
		}
	})
}

// lines is an input file of n chat lines, custom ids c0 to c(n-1).
func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"custom_id":"c%d","method":"POST","url":"/v1/chat/completions","body":{"model":"sim","messages":[{"role":"user","content":"line %d"}]}}`+"\n", i, i)
	}
	return b.String()
}

// upstream is the gateway's handler as the runner sees it: it answers each chat line with
// usage of 3 and 5 tokens, and counts the calls of each custom id and who made them.
type upstream struct {
	mu    sync.Mutex
	calls map[string]int
	keys  map[string]bool
	// records are the account record ids of each message's calls (usage.WithRecord).
	records map[string][]string
	hold    chan struct{} // when set, each call waits for it (or for its request to end)
	slow    string        // the message of a line that takes slowFor (or until its request ends)
}

// slowFor is how long the upstream's slow line takes: three leases of TestBatchSlowLine.
const slowFor = 3 * time.Second

func newUpstream() *upstream {
	return &upstream{calls: map[string]int{}, keys: map[string]bool{}, records: map[string][]string{}}
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.hold != nil {
		select {
		case <-u.hold:
		case <-r.Context().Done():
			w.WriteHeader(499)
			return
		}
	}
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	msg := ""
	if len(body.Messages) > 0 {
		msg = body.Messages[0].Content
	}
	u.mu.Lock()
	u.calls[msg]++
	u.records[msg] = append(u.records[msg], usage.RecordOf(r.Context()))
	u.mu.Unlock()
	if msg != "" && msg == u.slow {
		select {
		case <-time.After(slowFor):
		case <-r.Context().Done():
			w.WriteHeader(499)
			return
		}
	}
	u.mu.Lock()
	if k := auth.KeyFrom(r.Context()); k != nil {
		u.keys[k.ID] = true
	}
	u.mu.Unlock()
	w.Header().Set("X-Request-Id", "req_"+strings.ReplaceAll(msg, " ", "_"))
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(msg, " 3") {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`, msg)
}

func (u *upstream) callsOf(msg string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[msg]
}

// runner is a runner of s through h, polling fast, stopped at cleanup.
func runner(t *testing.T, s batch.Store, h http.Handler, lease time.Duration) *batch.Runner {
	r := &batch.Runner{Store: s, Poll: 5 * time.Millisecond, Lease: lease, Workers: 3,
		Rate: func(string) int { return 1000 },
		Key: func(_ context.Context, id string) (*auth.Key, error) {
			for _, k := range []*auth.Key{alice, bob} {
				if k.ID == id {
					return k, nil
				}
			}
			return nil, auth.ErrNotFound
		}}
	r.Start(h)
	t.Cleanup(func() { r.Close() })
	return r
}

// batchObj is what a test reads of a batch.
type batchObj struct {
	ID            string                                 `json:"id"`
	Status        string                                 `json:"status"`
	OutputFileID  string                                 `json:"output_file_id"`
	ErrorFileID   string                                 `json:"error_file_id"`
	RequestCounts struct{ Total, Completed, Failed int } `json:"request_counts"`
	Usage         *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
	Errors *struct {
		Data []struct {
			Code string
			Line int
		}
	}
	Metadata     map[string]string `json:"metadata"`
	InProgressAt *int64            `json:"in_progress_at"`
	CompletedAt  *int64            `json:"completed_at"`
	CancelledAt  *int64            `json:"cancelled_at"`
}

// start uploads input and creates a batch of it, as alice.
func start(t *testing.T, h llm.ObjectHost, input string) batchObj {
	t.Helper()
	f, err := upload(t, h, as(alice), "batch", "in.jsonl", strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"input_file_id":%q,"endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"job":"nightly"}}`, f["id"])
	var b batchObj
	mustCall(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches", ContentType: "application/json", Body: strings.NewReader(body)}, &b)
	if b.Status != "validating" || !strings.HasPrefix(b.ID, "batch_") || b.Metadata["job"] != "nightly" {
		t.Fatalf("create: got %+v", b)
	}
	return b
}

// await polls batch id until its status is one of want.
func await(t *testing.T, h llm.ObjectHost, id string, want ...string) batchObj {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var b batchObj
	for time.Now().Before(deadline) {
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches/" + id}, &b)
		for _, w := range want {
			if b.Status == w {
				return b
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("batch %s: status %s after 60s, want %v", id, b.Status, want)
	return b
}

// results reads a result file: its lines by custom id, failing on a custom id seen twice.
func results(t *testing.T, h llm.ObjectHost, id string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	if id == "" {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(content(t, h, as(alice), id)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("result line %s: %v", sc.Bytes(), err)
		}
		cid, _ := l["custom_id"].(string)
		if out[cid] != nil {
			t.Errorf("custom_id %s answered twice", cid)
		}
		out[cid] = l
	}
	return out
}

// checkAnswered checks that every line of an n-line batch b is answered once, in the
// output file or (line 3) the error file, with its usage.
func checkAnswered(t *testing.T, h llm.ObjectHost, b batchObj, n int) {
	t.Helper()
	out, bad := results(t, h, b.OutputFileID), results(t, h, b.ErrorFileID)
	if len(out)+len(bad) != n {
		t.Errorf("got %d results and %d errors, want %d lines answered", len(out), len(bad), n)
	}
	for i := range n {
		cid := fmt.Sprintf("c%d", i)
		l, in := out[cid], "output"
		if i == 3 {
			l, in = bad[cid], "error"
		}
		if l == nil {
			t.Errorf("line %s: not in the %s file", cid, in)
			continue
		}
		resp, _ := l["response"].(map[string]any)
		if id, _ := l["id"].(string); !strings.HasPrefix(id, "batch_req_") || resp == nil || l["error"] != nil {
			t.Errorf("line %s: got %v", cid, l)
			continue
		}
		if want := "req_line_" + strconv(i); resp["request_id"] != want {
			t.Errorf("line %s: request_id %v, want %s", cid, resp["request_id"], want)
		}
		body, _ := resp["body"].(map[string]any)
		if i == 3 && (resp["status_code"] != float64(400) || body["error"] == nil) {
			t.Errorf("line %s: got %v, want a 400 with its error body", cid, resp)
		}
		if i != 3 && (resp["status_code"] != float64(200) || body["object"] != "chat.completion") {
			t.Errorf("line %s: got %v, want a 200 with its completion", cid, resp)
		}
	}
	rc := b.RequestCounts
	if rc.Total != n || rc.Completed != n-1 || rc.Failed != 1 {
		t.Errorf("request_counts: got %+v, want %d total, %d completed, 1 failed", rc, n, n-1)
	}
	if b.Usage == nil || b.Usage.InputTokens != 3*(n-1) || b.Usage.OutputTokens != 5*(n-1) {
		t.Errorf("usage: got %+v, want %d in, %d out", b.Usage, 3*(n-1), 5*(n-1))
	}
}

func strconv(i int) string { return fmt.Sprint(i) }

// A batch runs to completed: validating, in_progress, finalizing, completed; every line
// answered once, as its owner's request; its output and error files are its owner's.
func TestBatchCompletes(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(37))
		runner(t, newStore(), up, time.Minute)
		b = await(t, h, b.ID, "completed")
		if b.InProgressAt == nil || b.CompletedAt == nil {
			t.Errorf("timestamps: got %+v", b)
		}
		checkAnswered(t, h, b, 37)
		for i := range 37 {
			if n := up.callsOf(fmt.Sprintf("line %d", i)); n != 1 {
				t.Errorf("line %d: called %d times, want once", i, n)
			}
		}
		if !up.keys[alice.ID] || len(up.keys) != 1 {
			t.Errorf("lines ran as %v, want alice's key only", up.keys)
		}
		if _, err := h.Object(as(bob), llm.ObjectCall{Method: "GET", Path: "files/" + b.OutputFileID + "/content"}); llm.KindOf(err) != llm.NotFound {
			t.Errorf("the output file as another key: got %v, want NotFound", err)
		}
		var l struct {
			Data    []batchObj
			HasMore bool `json:"has_more"`
		}
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches"}, &l)
		if len(l.Data) != 1 || l.Data[0].ID != b.ID || l.HasMore {
			t.Errorf("list: got %+v", l)
		}
		if err := call(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches/" + b.ID + "/cancel"}, nil); llm.HTTPStatus(err) != 400 {
			t.Errorf("cancel of a completed batch: got %v, want a 400", err)
		}
	})
}

// An input file with a bad line fails validation, with the line and code of each error.
func TestBatchFails(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		input := lines(2) + "not json\n" + `{"custom_id":"c0","method":"POST","url":"/v1/chat/completions","body":{}}` + "\n"
		b := start(t, h, input)
		runner(t, newStore(), newUpstream(), time.Minute)
		b = await(t, h, b.ID, "failed")
		if b.Errors == nil || len(b.Errors.Data) != 2 || b.Errors.Data[0].Code != "invalid_json_line" || b.Errors.Data[0].Line != 3 ||
			b.Errors.Data[1].Code != "duplicate_custom_id" || b.Errors.Data[1].Line != 4 {
			t.Errorf("errors: got %+v", b.Errors)
		}
	})
}

// A cancelled batch stops: cancelling while a line runs, then cancelled, its unrun lines in
// the error file as batch_cancelled.
func TestBatchCancel(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		up.hold = make(chan struct{})
		b := start(t, h, lines(40))
		runner(t, newStore(), up, time.Minute)
		await(t, h, b.ID, "in_progress")
		var c batchObj
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches/" + b.ID + "/cancel"}, &c)
		if c.Status != "cancelling" {
			t.Errorf("cancel: got %s, want cancelling", c.Status)
		}
		close(up.hold)
		c = await(t, h, b.ID, "cancelled")
		out, bad := results(t, h, c.OutputFileID), results(t, h, c.ErrorFileID)
		if len(out)+len(bad) != 40 || c.CancelledAt == nil {
			t.Errorf("got %d results and %d errors, want the 40 lines", len(out), len(bad))
		}
		cancelled := 0
		for _, l := range bad {
			if e, _ := l["error"].(map[string]any); e != nil && e["code"] == "batch_cancelled" {
				cancelled++
			}
		}
		if cancelled == 0 {
			t.Errorf("got %d lines batch_cancelled, want the lines not run", cancelled)
		}
	})
}

// A runner stopped midway (a replica restarting) leaves its lines to a new runner on the
// same store: the batch completes, each line answered once.
func TestBatchResumes(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(60))
		r1 := runner(t, newStore(), up, 100*time.Millisecond)
		for {
			var c batchObj
			mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches/" + b.ID}, &c)
			if c.RequestCounts.Completed >= 10 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		r1.Close()
		runner(t, newStore(), up, 100*time.Millisecond)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 60)
	})
}

// Two runners on one store (two replicas) answer each line once; one whose lines hang
// (a replica killed) loses its parts when their lease lapses, and the other runs them.
func TestBatchTwoRunners(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(50))
		runner(t, newStore(), up, time.Minute)
		runner(t, newStore(), up, time.Minute)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 50)
		for i := range 50 {
			if n := up.callsOf(fmt.Sprintf("line %d", i)); n != 1 {
				t.Errorf("line %d: called %d times, want once", i, n)
			}
		}

		dead := newUpstream()
		dead.hold = make(chan struct{}) // never released: its runner's lines hang
		b = start(t, h, lines(30))
		runner(t, cutOff{newStore()}, dead, 150*time.Millisecond)
		time.Sleep(50 * time.Millisecond) // let it claim parts
		runner(t, newStore(), newUpstream(), 150*time.Millisecond)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 30)
	})
}

// cutOff is the store as a replica cut off from it sees it: it can no longer renew a lease.
type cutOff struct{ batch.Store }

func (cutOff) Renew(context.Context, string, int, time.Duration) error {
	return errors.New("the store is out of reach")
}

// A line that runs longer than the lease (a slow model) keeps its part: the runner renews
// the lease while the line runs, so no other runner (nor another worker of its own) takes
// the part over and runs the line again.
func TestBatchSlowLine(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		up.slow = "line 1"
		b := start(t, h, lines(12))
		runner(t, newStore(), up, slowFor/3)
		runner(t, newStore(), up, slowFor/3)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 12)
		for i := range 12 {
			if n := up.callsOf(fmt.Sprintf("line %d", i)); n != 1 {
				t.Errorf("line %d: called %d times, want once", i, n)
			}
		}
	})
}

// lost is the store of a replica that dies after each line's charge, before its result
// is written: no result of its is kept.
type lost struct{ batch.Store }

func (lost) Answer(context.Context, string, int, []byte, batch.Tally) (bool, error) {
	return false, errors.New("the replica died")
}

// A line whose result was lost after it ran (its replica killed between the charge and
// the result) runs again on another replica as the same account record (usage.WithRecord:
// the batch's id and the line's), which the account adds once; every line has its own.
func TestBatchLineRecord(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(20))
		dead := runner(t, lost{newStore()}, up, 100*time.Millisecond)
		for up.callsOf("line 0")+up.callsOf("line 8")+up.callsOf("line 16") == 0 {
			time.Sleep(time.Millisecond)
		}
		dead.Close()
		runner(t, newStore(), up, 100*time.Millisecond)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 20)
		twice, ids := 0, map[string]bool{}
		up.mu.Lock()
		defer up.mu.Unlock()
		for i := range 20 {
			recs := up.records[fmt.Sprintf("line %d", i)]
			if len(recs) > 1 {
				twice++
			}
			for _, r := range recs {
				if r != recs[0] || !strings.HasPrefix(r, "batch:"+b.ID+":") || !strings.HasSuffix(r, fmt.Sprintf(":%d", i)) {
					t.Errorf("line %d: records %q, want one record, of its batch and line", i, recs)
					break
				}
			}
			if len(recs) > 0 && ids[recs[0]] {
				t.Errorf("line %d: record %q is another line's too", i, recs[0])
			}
			ids[recs[0]] = true
		}
		if twice == 0 {
			t.Error("no line ran twice: the dead runner's results were not lost")
		}
	})
}
