package bedrock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// maxFrame caps one event-stream frame. The format allows 16 MiB of payload; a delta is
// tiny, and an upstream that sends more cannot make the gateway hold it.
const maxFrame = 16<<20 + 128<<10

// stream is a ConverseStream answer as an llm.Stream. Not safe for concurrent use, except
// Close, which unblocks a Recv in progress by closing the body.
type stream struct {
	transport.Body
	name string
	src  *waitReader
	fr   frameReader
	dec  *eventstream.Decoder
	buf  []byte // the last frame's payload, reused

	msg message
	q   transport.Queue
}

// newStream reads body, the answer of the call of model whose request id is id.
func newStream(ctx context.Context, o origin, id, model string, body io.ReadCloser) *stream {
	src := &waitReader{r: body}
	s := &stream{Body: transport.NewBody(ctx, o.name, body), name: o.name, src: src,
		dec: eventstream.NewDecoder(), msg: message{origin: o, id: id, model: model}}
	s.fr.r = bufio.NewReaderSize(src, 32<<10)
	return s
}

// Recv returns the next event. io.EOF means the answer is complete: messageStop came, then
// its metadata (usage) or a clean end of the body. A body that ends before messageStop, or
// inside a frame, ends with a Truncated *llm.Error; a frame whose checksum fails, or that
// is not an event, is Unavailable; an exception frame is RateLimited or Unavailable
// (origin.exception). A canceled context is Canceled (or Timeout, by its cause), a closed
// stream Canceled. Errors are sticky.
func (s *stream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before each read of the body, and before the
// drain that follows a complete answer.
func (s *stream) BeforeWait(f func()) {
	s.OnWait(f)
	s.src.wait = f
}

var _ llm.Waiter = (*stream)(nil)

// Fill implements transport.Source: it decodes one frame with the SDK's decoder (which
// checks both CRCs) and queues its llm.Events, or returns the error that ends the stream.
func (s *stream) Fill() error {
	s.fr.n = 0
	m, err := s.dec.Decode(&s.fr, s.buf)
	if err != nil {
		return s.endError(err)
	}
	s.buf = m.Payload[:0]
	switch header(m.Headers, bedrock.HeaderMessageType) {
	case bedrock.MessageEvent:
		if err := s.msg.event(&s.q, header(m.Headers, bedrock.HeaderEventType), m.Payload); err != nil {
			return err
		}
		if s.msg.finished {
			return io.EOF
		}
		return nil
	case bedrock.MessageException:
		var ex bedrock.Exception
		json.Unmarshal(m.Payload, &ex)
		return s.msg.exception(header(m.Headers, bedrock.HeaderExceptionType), ex)
	case bedrock.MessageError:
		// A transport-level error frame: its code and message are in headers.
		return s.msg.exception(header(m.Headers, bedrock.HeaderErrorCode),
			bedrock.Exception{Message: header(m.Headers, bedrock.HeaderErrorMessage)})
	}
	return llm.Errorf(llm.Unavailable, "%s sent a frame that is not an event", s.name)
}

// endError maps a frame the decoder could not read.
func (s *stream) endError(err error) error {
	if e := s.Stopped(); e != nil {
		return e
	}
	switch {
	case errors.Is(err, errFrameTooLarge):
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + ": frame over the size limit", Err: err}
	case errors.As(err, new(eventstream.ChecksumError)), errors.As(err, new(eventstream.LengthError)):
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + ": corrupt event-stream frame", Err: err}
	case s.src.end != nil && s.src.end != io.EOF:
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream read failed: " + s.src.end.Error(), Err: s.src.end}
	case s.fr.n > 0 || err != io.EOF:
		// The SDK's own reader takes io.ErrUnexpectedEOF for a clean end, and a payload cut
		// short surfaces as io.EOF at its CRC: bytes of a frame were read, so it was cut.
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream cut inside a frame", Err: err}
	}
	// A clean end between frames: complete if messageStop came (its metadata never did:
	// usage is left to the gateway's estimate).
	if s.msg.stopped {
		s.msg.finish(&s.q)
		return io.EOF
	}
	return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream ended before messageStop"}
}

func header(h eventstream.Headers, name string) string {
	if v := h.Get(name); v != nil {
		return v.String()
	}
	return ""
}

var errFrameTooLarge = errors.New("event-stream frame over the size limit")

// frameReader counts what the decoder reads of one frame and caps it.
type frameReader struct {
	r *bufio.Reader
	n int
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.n >= maxFrame {
		return 0, errFrameTooLarge
	}
	p = p[:min(len(p), maxFrame-f.n)]
	n, err := f.r.Read(p)
	f.n += n
	return n, err
}

// waitReader passes the body through, runs wait before each read, and remembers how the
// body ended.
type waitReader struct {
	r    io.Reader
	wait func()
	end  error
}

func (w *waitReader) Read(p []byte) (int, error) {
	if w.end != nil {
		return 0, w.end
	}
	if w.wait != nil {
		w.wait()
	}
	n, err := w.r.Read(p)
	if err != nil {
		w.end = err
	}
	return n, err
}
