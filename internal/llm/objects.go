package llm

import (
	"context"
	"io"
	"net/url"
)

// ObjectCall is one call of a target's stored-object API, passed through (issue 48): OpenAI's
// /files and /batches (OpenAI, Azure, and the gateway's own host of emulated batches) and
// Anthropic's /messages/batches. Path is relative to the API's versioned root, as the SDKs
// name it ("files", "files/file-abc/content", "batches/batch_1/cancel", "messages/batches",
// "messages/batches/msgbatch_1/results"), and its ids are the upstream's own, never the ids
// the gateway shows its clients.
type ObjectCall struct {
	Method, Path string
	Query        url.Values
	// ContentType and Body are the request's (an upload's multipart body, a batch's JSON),
	// streamed: never held whole. Length is the body's size, -1 when unknown; Body nil: none.
	ContentType string
	Body        io.Reader
	Length      int64
}

// ObjectAnswer is a 2xx answer of an ObjectCall: its status, content type and body,
// streamed. The caller closes Body.
type ObjectAnswer struct {
	Status      int
	ContentType string
	Body        io.ReadCloser
}

// ObjectHost is a target that keeps files and batches. Object returns the upstream's 2xx
// answer; a non-2xx answer or a connection failure is an *Error with its Kind and Status
// (NotFound for an unknown id), its message free of the upstream's credentials, as from
// Provider.Stream. Canceling ctx aborts the call.
type ObjectHost interface {
	Object(ctx context.Context, call ObjectCall) (*ObjectAnswer, error)
}
