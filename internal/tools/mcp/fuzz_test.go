package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// FuzzAnswer feeds any bytes to a call's reader, as an event stream and as a JSON answer: it
// never panics and ends with the result, io.EOF after it, or an error.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"sluice-1\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"1","error":{"code":-1,"message":"no"}}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ct := range []string{"text/event-stream", "application/json"} {
			resp := &http.Response{Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(b))}
			st, err := newStream(resp, func() {})
			if err != nil {
				continue
			}
			k := &Call{c: New(Config{}), id: 1, token: "sluice-1", st: st}
			for i := 0; i <= len(b)+1; i++ {
				if _, err := k.Recv(); err != nil {
					break
				}
			}
			k.done = true // nothing to cancel: the fuzz has no server
			k.Close()
		}
	})
}

// FuzzReadLine splits any bytes into lines as a local server's stdout is read: no line holds
// a newline or exceeds the cap; a longer line is cut at the cap (errLongLine, or the end of
// input for the last one), and the others are the input's.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n\n{}\npartial"), 8)
	f.Add([]byte(strings.Repeat("x", 40)+"\nshort\n"), 16)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		max = 1 + int(uint(max)%64)
		want := strings.Split(string(b), "\n")
		for i, w := range want {
			want[i] = w[:min(len(w), max)]
		}
		br := bufio.NewReaderSize(bytes.NewReader(b), 16)
		var got []string
		for {
			line, err := readLine(br, max)
			if len(line) > max || bytes.ContainsRune(line, '\n') {
				t.Fatalf("got line %q, over %d bytes or with a newline", line, max)
			}
			got = append(got, string(line))
			if err != nil && !errors.Is(err, errLongLine) {
				break
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("got lines %q, want %q", got, want)
		}
	})
}

// FuzzStdioRead routes any stdout of a local server: it never panics, and what waits for
// request 1 gets at most its response.
func FuzzStdioRead(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"sluice-1\",\"progress\":1}}\n" +
		"not json\n[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := New(Config{URL: "http://127.0.0.1:1/mcp"}) // replies to the server's requests fail: no server
		defer c.Close()
		tr := &stdio{c: c}
		p := &proc{name: "process 1", ids: map[int64]*inbox{}, tokens: map[string]*inbox{}}
		in := &inbox{ctx: context.Background(), t: tr, p: p, id: 1, token: "sluice-1", wake: make(chan struct{}, 1), done: make(chan struct{})}
		p.ids[1], p.tokens["sluice-1"] = in, in
		tr.read(p, bytes.NewReader(b))
		in.fail(io.EOF)
		for range 3 {
			m, err := in.next()
			if err != nil {
				break
			}
			if m.isResponse() && !m.answers(1) {
				t.Fatalf("got %+v, the response of another request", m)
			}
		}
		in.Close()
	})
}
