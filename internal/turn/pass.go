package turn

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// maxKept caps a JSON or text answer of Pass, which is held whole (its bill is read from it,
// and it leaves with its cost, like a plain call's); the largest are image edits in base64.
const maxKept = 256 << 20

// passWrite bounds each write of a passed binary answer: a client that stops reading is cut,
// as the server's write_timeout cuts an event stream's.
const passWrite = 30 * time.Second

// Pass serves a request whose answer passes through as its upstream sent it, with its media
// type (dialect.Media: speech, transcriptions, image edits): the first target that answers
// 2xx commits; before that the chain falls back, and a chain that fails answers the wire's
// error. A JSON or text answer is read whole, billed from it (bill) and sent with its cost;
// any other (audio) is billed from the request (bill(nil)), then streamed to w as it comes,
// flushed whenever the upstream is waited for. An answer cut after its first byte cuts the
// client's connection (http.ErrAbortHandler, as net/http/httputil's reverse proxy does), so
// that no client takes a cut audio for a whole one. req's files are closed at the end.
func (t *Turn) Pass(ctx context.Context, e Edge, w http.ResponseWriter, req *llm.Request, bill func([]byte) (llm.Usage, bool)) error {
	defer req.CloseFiles()
	st, err := t.Run.Next(ctx)
	t.served(e, st)
	if err != nil {
		return e.Error(err)
	}
	defer st.Close()
	ev, err := st.Recv() // the committing event, replayed
	if err != nil {
		return e.Error(err)
	}
	ct := ev.Field
	if ct == "" {
		ct = "application/octet-stream"
	}
	meter := func(answer []byte) {
		if bill == nil {
			return
		}
		if u, ok := bill(answer); ok {
			e.Access().Usage = telemetry.UsageOf(u)
			if t.Meter != nil {
				t.Meter.Round(st.Target, st.Model, &llm.Response{Usage: u}, nil)
			}
			e.Cost()
		}
	}
	if kept(ct) {
		b := ev.Raw
		for {
			ev, err := st.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					return e.Error(err) // nothing was written yet: the wire's error
				}
				break
			}
			if b = append(b, ev.Raw...); len(b) > maxKept {
				return e.Error(&llm.Error{Kind: llm.Unavailable, Target: st.Target, Message: "the answer is larger than the gateway's limit"})
			}
		}
		meter(b)
		e.Header("Content-Type", ct)
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(b)
		return err
	}
	meter(nil)
	e.Header("Content-Type", ct)
	rc := http.NewResponseController(w)
	st.BeforeWait(func() { _ = rc.Flush() })
	w.WriteHeader(http.StatusOK)
	for {
		_ = rc.SetWriteDeadline(time.Now().Add(passWrite))
		if _, err := w.Write(ev.Raw); err != nil {
			e.Access().Kind = llm.Canceled // the client stopped reading, or left
			return nil
		}
		if ev, err = st.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			e.Access().Kind, e.Access().Error = llm.KindOf(err), llm.Public(err).Message
			panic(http.ErrAbortHandler)
		}
	}
}

// kept reports whether an answer of media type ct is held whole: JSON and text.
func kept(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json" || strings.HasPrefix(mt, "text/")
}
