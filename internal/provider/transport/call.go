package transport

import (
	"context"
	"io"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Call does hr, a call whose answer is one JSON document (a plain endpoint: rerank,
// embeddings), and returns the whole 2xx answer's body; an answer larger than limit bytes is
// Unavailable. Another status is its Answer (body read, at most MaxErrorBody, and closed)
// for the adapter to map to its wire's error. A call that got no answer, or whose context
// ended while the body was read, is Error's *llm.Error.
func (e Endpoint) Call(ctx context.Context, hr *http.Request, limit int64) ([]byte, *Answer, error) {
	hr.Header.Set("Accept", "application/json")
	res, a, err := do(ctx, e.Client, e.Name, hr)
	if res == nil {
		return nil, a, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, nil, Error(ctx, e.Name, err)
	}
	if int64(len(out)) > limit {
		return nil, nil, &llm.Error{Kind: llm.Unavailable, Status: res.StatusCode,
			Message: e.Name + ": the answer is larger than the gateway's limit"}
	}
	return out, nil, nil
}

// Post does a call whose answer is one JSON document (Call) of body to u with the
// endpoint's headers, after authorize set the call's credentials on it; authorize returns
// how the adapter maps a non-2xx Answer to its error, whose scrubber knows those
// credentials. The whole 2xx answer is returned.
func (e Endpoint) Post(ctx context.Context, u string, body []byte, limit int64,
	authorize func(*http.Request) (func(*Answer) error, error)) ([]byte, error) {
	hr, err := e.Request(ctx, u, body)
	if err != nil {
		return nil, err
	}
	status, err := authorize(hr)
	if err != nil {
		return nil, err
	}
	out, a, err := e.Call(ctx, hr, limit)
	switch {
	case err != nil:
		return nil, err
	case a != nil:
		return nil, status(a)
	}
	return out, nil
}
