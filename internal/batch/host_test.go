package batch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/llm"
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
