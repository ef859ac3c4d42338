package runs

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/turn"
)

// Delivery is what one connection was given of a run (Copy).
type Delivery struct {
	// Early is the failure of a run that this connection started and that failed before
	// its first frame, with nothing sent yet: the caller answers it as a plain HTTP error.
	Early error
	// Kind is how the connection ended, for its access record: Canceled when the client
	// stopped reading or was let go (it may resume), Unavailable when the store failed,
	// none otherwise (the run's end, or the client that left).
	Kind llm.Kind
	// FirstText is the time from start to the first text delta this connection was sent
	// (0: none, or a resume, which is not a new wait).
	FirstText time.Duration
}

// Copy writes rd's frames to ew as they come, until the run ends, the reader is let go or
// ctx ends, and never ends the run. Frames leave in batches: whatever is written goes out
// when the reader is about to wait. rn is the run when this connection started it: its
// headers (headers sets them) then leave with the first frame, once the run committed to a
// target; a resume (rn nil) sends them before it first waits. start is the request's
// arrival.
func Copy(ctx context.Context, rd *Reader, ew *sse.Writer, rn *Run, headers func(http.Header), start time.Time) Delivery {
	var d Delivery
	ew.Batching()
	rd.BeforeWait(ew.Release)
	if rn == nil {
		if err := ew.Start(headers); err != nil {
			return d
		}
	}
	for first := true; ; first = false {
		b, err := rd.Next(ctx)
		if err != nil {
			// io.EOF: the run's end; ErrBehind, ErrTrimmed: the client resumes; ctx: it left.
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && ew.Begun() {
				d.Kind = ReadEnd(err)
			}
			if !ew.Begun() {
				_ = ew.Start(headers)
			}
			return d
		}
		if first && rn != nil {
			if early := rn.Early(); early != nil && !ew.Begun() {
				d.Early = early
				return d
			}
			if err := ew.Start(headers); err != nil {
				return d
			}
		}
		if err := ew.Frame(b); err != nil {
			d.Kind = llm.Canceled
			return d
		}
		if rn != nil && d.FirstText == 0 && !start.IsZero() && bytes.Contains(b, textDelta) {
			// The frames are the encoder's own bytes.
			d.FirstText = time.Since(start)
		}
	}
}

// textDelta marks the frame of a text delta, as the UI stream encoder writes it.
var textDelta = []byte(`"type":"text-delta"`)

// Serve writes a run's frames to the client of the edge e as they come (Copy), with the
// edge's heartbeats and write deadlines, and records the connection in e's access record.
// rn is the run when this connection started it: its headers then carry the served target,
// and a chain that failed before commit answers a plain HTTP error.
func Serve(ctx context.Context, e turn.Edge, rn *Run, rd *Reader) error {
	in := e.Access()
	in.Stream = true
	e.Header("X-Vercel-Ai-Ui-Message-Stream", "v1")
	ew := e.Stream(false)
	defer ew.Close()
	served := func(http.Header) { // the response's, which e.Header sets
		if rn == nil {
			return
		}
		in.Target, in.Attempts = rn.Headed()
		if in.Target != "" {
			e.Header("X-Sluice-Target", in.Target)
		}
		e.Header("X-Sluice-Attempts", strconv.Itoa(in.Attempts))
	}
	d := Copy(ctx, rd, ew, rn, served, in.Start)
	if d.FirstText > 0 && in.FirstText == 0 {
		in.FirstText = d.FirstText // time to first token of a run: to the first text this client was sent
	}
	if d.Early != nil {
		served(nil)
		return e.Error(d.Early)
	}
	if d.Kind != llm.KindNone {
		in.Kind = d.Kind
	}
	return nil
}

// Run starts a run of sp (Manager.Start) and serves it to the client of e from its first
// frame (Serve). The client that leaves does not stop the run (DESIGN §8), and Run returns
// when the run ended, so that the request's accounting (usage, cost, budget, the limiter's
// reconciliation, the access line) covers every round of it; on shutdown the drain's grace
// bounds it. e's access record gets the run's usage and, after a restart, the target that
// ended it and the attempts with the restart's (the headers may have left before it), and
// every upstream call of the run for its spans and metrics.
func (m *Manager) Run(ctx context.Context, e turn.Edge, sp Spec) error {
	rn, rd, err := m.Start(ctx, sp)
	if err != nil {
		return e.Error(Public(err))
	}
	defer rd.Close()
	err = Serve(ctx, e, rn, rd)
	<-rn.Ended()
	in := e.Access()
	in.Usage = telemetry.UsageOf(rn.Usage())
	in.Target, in.Attempts = rn.Served()
	in.Tries, in.Response = rn.Calls()
	return err
}
