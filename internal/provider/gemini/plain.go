package gemini

import (
	"context"
	"encoding/json"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/gemini"
)

// plainStream is the answer of a generateContent call (llm.Request.Plain) as an llm.Stream:
// the whole answer is one chunk of the stream, queued by the stream's own code, so that the
// relay takes it as the stream of the same answer. An error object in a 2xx answer is the
// error an error event would be; a choice without its finishReason is Truncated, as at the
// end of a stream.
type plainStream struct {
	stream
	read bool
}

func newPlainStream(ctx context.Context, o origin, n int, body io.ReadCloser) *plainStream {
	return &plainStream{stream: stream{Body: transport.NewBody(ctx, o.name, body), origin: o, n: n,
		calls: make([]int, n), finish: make([]string, n)}}
}

// Recv implements llm.Stream.
func (s *plainStream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before the one read of the body.
func (s *plainStream) BeforeWait(f func()) { s.OnWait(f) }

// Fill implements transport.Source: the whole answer at the first call, its end at the next.
func (s *plainStream) Fill() error {
	if s.read {
		return s.endError(io.EOF)
	}
	s.read = true
	data, err := s.ReadAll()
	if err != nil {
		return err
	}
	var r gemini.Response
	if err := json.Unmarshal(data, &r); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + " answered with something other than a JSON response", Err: err}
	}
	return s.chunk(&r)
}
