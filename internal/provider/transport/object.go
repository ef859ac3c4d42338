package transport

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/sluice-gw/sluice/internal/llm"
)

// ObjectRequest is the request of call (llm.ObjectCall) to the API root base: its method,
// base's path + "/" + call.Path with call.Query added to what base's query holds (Azure's
// api-version), header (a copy: the adapter's credentials), the call's trace, and call's
// body streamed, with its content type and length. A request that cannot be built is
// Internal.
func ObjectRequest(ctx context.Context, name string, base *url.URL, header http.Header, call llm.ObjectCall) (*http.Request, error) {
	u := *base
	u.Path, u.RawPath = strings.TrimRight(base.Path, "/")+"/"+call.Path, ""
	if len(call.Query) > 0 {
		q := u.Query()
		for k, vs := range call.Query {
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	var body io.Reader
	if call.Body != nil {
		body = io.NopCloser(call.Body) // never a known in-memory reader: streamed as it comes
	}
	hr, err := http.NewRequestWithContext(ctx, call.Method, u.String(), body)
	if err != nil {
		return nil, &llm.Error{Kind: llm.Internal, Message: name + ": cannot build the request", Err: err}
	}
	hr.Header = header.Clone()
	hr.Header.Del("Content-Type")
	hr.Header.Set("Accept", "*/*")
	if call.Body != nil {
		hr.Header.Set("Content-Type", call.ContentType)
		hr.ContentLength = call.Length // -1: chunked
		if call.Length == 0 {
			hr.Body = http.NoBody
		}
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(hr.Header))
	return hr, nil
}

// Object does hr, an object call's request (ObjectRequest), on hc: its 2xx answer,
// streamed, or the Answer of any other status, for the adapter to map to its wire's error,
// or the call's error.
func Object(ctx context.Context, hc *http.Client, name string, hr *http.Request) (*llm.ObjectAnswer, *Answer, error) {
	if hc == nil {
		hc = HTTPClient
	}
	res, a, err := do(ctx, hc, name, hr)
	if res == nil {
		return nil, a, err
	}
	return &llm.ObjectAnswer{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type"),
		Body: res.Body}, nil, nil
}

// ObjectError completes e, the error of an object call's non-2xx answer: a 404 is the
// NotFound of an unknown id (llm.ObjectHost).
func ObjectError(e *llm.Error) *llm.Error {
	if e.Status == http.StatusNotFound {
		e.Kind = llm.NotFound
	}
	return e
}

// DoObject is an object call of provider name to its API root base with header (its
// credentials) on hc: ObjectRequest, then Object; a non-2xx answer is the error status
// makes of it (the adapter's wire), completed by ObjectError.
func DoObject(ctx context.Context, hc *http.Client, name string, base *url.URL, header http.Header, call llm.ObjectCall,
	status func(a *Answer) *llm.Error) (*llm.ObjectAnswer, error) {
	hr, err := ObjectRequest(ctx, name, base, header, call)
	if err != nil {
		return nil, err
	}
	a, bad, err := Object(ctx, hc, name, hr)
	switch {
	case err != nil:
		return nil, err
	case bad != nil:
		return nil, ObjectError(status(bad))
	}
	return a, nil
}
