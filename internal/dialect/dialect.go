// Package dialect is what every client wire of a model call (packages chat, responses,
// anthropic) is to the edge once a request is decoded: how a committed stream opens, ends and
// fails in-band on an sse.Writer, and the body of a non-streamed answer. The commit point,
// the headers, heartbeats and trailers, and fallback are the same for every wire: the edge
// serves them.
package dialect

import (
	"errors"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Sink is relay.Sink's method set, as the dialects (which do not know the relay) name it.
type Sink = interface{ Event(*llm.Event) error }

// ErrNotOpen is Wire.End's error for a stream that was never opened.
var ErrNotOpen = errors.New("the stream was not opened")

// Wire is one request's answer on its client's wire.
type Wire interface {
	// Open writes the opening events of the stream committed to the served model on ew and
	// returns the sink the relay writes the round to.
	Open(ew *sse.Writer, model string) (Sink, error)
	// End writes the last events after a complete round; ErrNotOpen when Open was not
	// called (the client left before the stream started, and the round went on without it).
	End(u *llm.Usage) error
	// Fail writes the in-band failure; Open may not have been called (the chain failed after a
	// keepalive had sent the headers).
	Fail(ew *sse.Writer, err error) error
	// Attempt returns the sink of one attempt of a non-streamed answer (fresh each time: an
	// abandoned attempt's output is not the answer), and Body the answer of a complete one.
	Attempt(model string) Sink
	Body(model string, resp *llm.Response) []byte
}
