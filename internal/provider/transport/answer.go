package transport

import (
	"context"
	"io"
	"mime"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
)

// MaxErrorBody caps how much of an answer that is not a stream is read: enough for any
// error object, and an upstream (or a proxy in front of it) that sends a large page in
// place of one cannot make the gateway hold it.
const MaxErrorBody = 64 << 10

// Answer is what an upstream sent in place of the event stream it was asked for: a non-2xx
// status, or a 2xx answer in JSON (a server that ignored stream: true, or an error sent
// with 200). Body holds at most MaxErrorBody bytes of it.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   bool // a 2xx answer in JSON
}

// Open does hr on hc, asking for an event stream, and returns the response: the caller
// reads and closes its body. An upstream that answered something else is returned as its
// Answer, body read and closed, for the adapter to map to its wire's error. A call that got
// no answer, or whose context ended while an error's body was read, is Error's *llm.Error.
func Open(ctx context.Context, hc *http.Client, name string, hr *http.Request) (*http.Response, *Answer, error) {
	res, a, err := do(ctx, hc, name, hr)
	if res == nil {
		return nil, a, err
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
		a := read(res)
		a.JSON = true
		return nil, a, nil
	}
	return res, nil, nil
}

// do does hr on hc: a 2xx response, or the Answer of any other status, or the call's error.
func do(ctx context.Context, hc *http.Client, name string, hr *http.Request) (*http.Response, *Answer, error) {
	res, err := hc.Do(hr)
	if err != nil {
		return nil, nil, Error(ctx, name, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		a := read(res)
		if e := llm.ContextError(ctx); e != nil {
			return nil, nil, e
		}
		return nil, a, nil
	}
	return res, nil, nil
}

// read reads and closes the body of an answer that is not a stream.
func read(res *http.Response) *Answer {
	b, _ := io.ReadAll(io.LimitReader(res.Body, MaxErrorBody))
	res.Body.Close()
	return &Answer{Status: res.StatusCode, Header: res.Header, Body: b}
}
