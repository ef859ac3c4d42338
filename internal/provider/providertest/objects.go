package providertest

import (
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// ObjectWire is what an adapter's upstream of stored objects checks in every call: root is
// the API's path ("/v1", "/openai/v1"), Auth reports whether r carries the adapter's
// credential and headers (its key, its version).
type ObjectWire struct {
	Root string
	Auth func(r *http.Request) bool
}

// ObjectHost checks an adapter's llm.ObjectHost against an upstream speaking the files API:
// a multipart upload received streamed (the upstream reads the first part before the
// client wrote the rest), a JSONL content streamed back, a 404 that quotes key (NotFound,
// masked), a 401 (Auth, key never shown), a connection cut mid-answer, and a query passed
// on. host builds the adapter for the upstream's base URL; its Scrub masks key.
func ObjectHost(t *testing.T, w ObjectWire, key string, host func(base string) llm.ObjectHost) {
	t.Helper()
	first := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !w.Auth(r) {
			rw.WriteHeader(401)
			io.WriteString(rw, `{"error":{"message":"Incorrect API key provided: `+key+`","type":"invalid_request_error"}}`)
			return
		}
		p := strings.TrimPrefix(r.URL.Path, w.Root)
		switch {
		case r.Method == "POST" && p == "/files":
			mr, err := r.MultipartReader()
			if err != nil {
				rw.WriteHeader(400)
				return
			}
			part, err := mr.NextPart()
			if err != nil || part.FormName() != "purpose" {
				rw.WriteHeader(400)
				return
			}
			close(first) // the first part came before the client wrote the file
			n := 0
			for {
				part, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.Copy(io.Discard, part)
				n += int(b)
			}
			rw.Header().Set("Content-Type", "application/json")
			io.WriteString(rw, `{"id":"file-up","object":"file","bytes":`+strconv.Itoa(n)+`}`)
		case r.Method == "GET" && p == "/files/file-up/content":
			rw.Header().Set("Content-Type", "application/jsonl")
			io.WriteString(rw, "{\"custom_id\":\"a\"}\n{\"custom_id\":\"b\"}\n")
		case r.Method == "GET" && p == "/files":
			rw.Header().Set("Content-Type", "application/json")
			io.WriteString(rw, `{"object":"list","data":[],"after":"`+r.URL.Query().Get("after")+`"}`)
		case p == "/files/cut":
			rw.Header().Set("Content-Type", "application/jsonl")
			rw.Header().Set("Content-Length", "1000")
			io.WriteString(rw, "{\"custom_id\":")
			rw.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		default:
			rw.WriteHeader(404)
			io.WriteString(rw, `{"error":{"message":"No such File object: x (key `+key+`)","type":"invalid_request_error"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	h := host(srv.URL)
	ctx := context.Background()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("purpose", "batch")
		<-first
		fw, _ := mw.CreateFormFile("file", "in.jsonl")
		io.WriteString(fw, strings.Repeat("{\"custom_id\":\"x\"}\n", 1000))
		pw.CloseWithError(mw.Close())
	}()
	a, err := h.Object(ctx, llm.ObjectCall{Method: "POST", Path: "files", ContentType: mw.FormDataContentType(), Body: pr, Length: -1})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if b := readAll(t, a); !strings.Contains(b, `"bytes":18000`) {
		t.Errorf("upload answered %s, want the 18000 bytes received", b)
	}
	a, err = h.Object(ctx, llm.ObjectCall{Method: "GET", Path: "files/file-up/content"})
	if err != nil {
		t.Fatalf("content: %v", err)
	}
	if a.ContentType != "application/jsonl" || readAll(t, a) != "{\"custom_id\":\"a\"}\n{\"custom_id\":\"b\"}\n" {
		t.Errorf("content: got %q", a.ContentType)
	}
	a, err = h.Object(ctx, llm.ObjectCall{Method: "GET", Path: "files", Query: map[string][]string{"after": {"file-9"}}})
	if err != nil || !strings.Contains(readAll(t, a), `"after":"file-9"`) {
		t.Errorf("list: the query was not passed on (%v)", err)
	}
	_, err = h.Object(ctx, llm.ObjectCall{Method: "GET", Path: "files/nope"})
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.NotFound || le.Status != 404 {
		t.Errorf("unknown id: got %v, want NotFound 404", err)
	}
	Scrubbed(t, err, key)
	if a, err = h.Object(ctx, llm.ObjectCall{Method: "GET", Path: "files/cut"}); err == nil {
		if _, err = io.ReadAll(a.Body); err == nil {
			t.Error("a cut answer read without an error")
		}
		a.Body.Close()
	}
}

// ObjectAuth checks that an adapter whose upstream refuses its credential gets Auth, the
// key nowhere in the error.
func ObjectAuth(t *testing.T, key string, host func(base string) llm.ObjectHost) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(401)
		io.WriteString(rw, `{"error":{"message":"Incorrect API key provided: `+key+`","type":"authentication_error"}}`)
	}))
	t.Cleanup(srv.Close)
	_, err := host(srv.URL).Object(context.Background(), llm.ObjectCall{Method: "GET", Path: "files"})
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.Auth || strings.Contains(le.Error(), key) {
		t.Errorf("refused credential: got %v, want Auth without the key", err)
	}
}

func readAll(t *testing.T, a *llm.ObjectAnswer) string {
	t.Helper()
	defer a.Body.Close()
	b, err := io.ReadAll(a.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(b)
}
