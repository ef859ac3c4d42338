package responses

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Sink is what the relay writes a round to (dialect.Sink).
type Sink = dialect.Sink

var _ dialect.Wire = (*Wire)(nil)

// Wire is the Responses wire of one request: response.created ... response.completed,
// the error event and response.failed, the Response object.
type Wire struct {
	id   string
	meta *respMeta
	sink *stream
}

// NewWire is the wire of request r: id is the gateway's request id (the response is
// "resp_" + id, its items' ids derive from it), created its Unix time. The Response names
// the model asked for until a target commits, then the served one.
func NewWire(id string, created int64, r *Request) *Wire {
	return &Wire{id: id, meta: &respMeta{id: "resp_" + id, created: created, model: r.Model, echo: &r.echo,
		metadata: r.Req.Metadata}}
}

// Open announces the response committed to the served model on ew (response.created,
// response.in_progress) and returns the sink the round is relayed to.
func (w *Wire) Open(ew *sse.Writer, model string) (Sink, error) {
	w.meta.model = model
	w.sink = newStream(ew, w.meta, w.id)
	return w.sink, w.sink.begin()
}

// End closes what is open and sends response.completed (or response.incomplete) after a
// complete round.
func (w *Wire) End(u *llm.Usage) error {
	if w.sink == nil {
		return dialect.ErrNotOpen
	}
	return w.sink.end(u)
}

// Fail sends the error event and response.failed; Open may not have been called (the chain
// failed after a keepalive had sent the headers).
func (w *Wire) Fail(ew *sse.Writer, err error) error {
	if w.sink == nil {
		w.sink = newStream(ew, w.meta, w.id)
	}
	return w.sink.fail(err)
}

// Attempt is the sink of one attempt of a non-streamed answer by model: it assembles the
// output items, fresh each time.
func (w *Wire) Attempt(model string) Sink {
	w.meta.model = model
	w.sink = newStream(nil, w.meta, w.id)
	return w.sink
}

// Body is the Response object of a complete non-streamed answer.
func (w *Wire) Body(_ string, resp *llm.Response) []byte {
	return w.sink.body(&resp.Usage)
}

// kept is what a stored response keeps of a complete answer (state.go): its Response object
// as the client got it, and its output items as a later request hands them back. ok is
// false when the answer did not complete (it failed, or the client left before it began).
func (w *Wire) kept() (resp []byte, items []json.RawMessage, ok bool) {
	s := w.sink
	if s == nil || s.done == nil {
		return nil, nil, false
	}
	for _, it := range s.items {
		if b := appendBack(nil, it); b != nil {
			items = append(items, b)
		}
	}
	return appendResponse(nil, s.meta, s.done, s.items), items, true
}
