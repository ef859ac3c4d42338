package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// result is how one invocation ended: its outcome (a telemetry.Tool* value) and the text the
// model is sent back.
type result struct {
	outcome string
	model   string
}

// invoke runs one call to its end and writes its lane with enc: progress coalesced, then
// tool-output-available or tool-output-error. The tool is read by a goroutine of its own (the
// pump), which invoke waits for; the run's goroutine meanwhile relays progress and keeps the
// watchdogs: the call's timeout (its context) and, once the answer streams, its liveness.
func (o *Offer) invoke(ctx context.Context, e *entry, tc llm.ToolCall, args json.RawMessage, enc *uistream.Encoder) result {
	start := time.Now()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if e.timeout > 0 {
		var stop context.CancelFunc
		cctx, stop = context.WithTimeoutCause(cctx, e.timeout, errTimeout)
		defer stop()
	}
	mb := newMailbox()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump(cctx, e.kind, args, tc.ID, mb)
	}()
	o.watch(e, tc, mb, enc, cancel)
	<-done // the pump has closed its call: an MCP server was told of a cancellation
	mb.mu.Lock()
	output, err := mb.output, mb.err
	mb.mu.Unlock()

	r := o.outcome(ctx, cctx, e, output, err)
	if r.outcome == telemetry.ToolOK {
		enc.ToolOutput(tc.ID, []byte(o.redactJSON(string(output))))
	} else {
		enc.ToolError(tc.ID, o.redactText(r.model))
		if r.outcome != telemetry.ToolCanceled {
			o.set.o.Log.Warn("tool failed", "tool", tc.Name, "call", tc.ID, "outcome", r.outcome, "err", err.Error())
		}
		r.model = "Error: " + r.model
	}
	if o.redactModel {
		r.model = o.redactText(r.model)
	}
	telemetry.Tool(ctx, telemetry.ToolRun{Name: tc.Name, Label: e.label, CallID: tc.ID, Start: start,
		Duration: time.Since(start), Outcome: r.outcome})
	return r
}

// pump reads the call into mb until its end.
func pump(ctx context.Context, k kind, args json.RawMessage, id string, mb *mailbox) {
	c, err := k.start(ctx, args, id, mb.alive)
	if err != nil {
		mb.end(nil, err)
		return
	}
	defer c.Close()
	if c.Streaming() {
		mb.setStreaming()
	}
	for {
		ev, err := c.Recv()
		switch {
		case err != nil:
			mb.end(nil, err)
			return
		case ev.progress != nil:
			mb.put(ev.progress)
		default:
			mb.end(ev.output, nil)
			return
		}
	}
}

// watch relays the call's progress until it ends: a report opens a window of the set's
// interval, at whose end the newest report goes out (at most one per interval; those in
// between are dropped), and the last report always goes out before the outcome. While the
// answer streams, a silence of the tool's liveness cancels the call.
func (o *Offer) watch(e *entry, tc llm.ToolCall, mb *mailbox, enc *uistream.Encoder, cancel context.CancelCauseFunc) {
	var (
		pending       *Progress
		flush, live   *time.Timer
		flushC, liveC <-chan time.Time
		send          = func() { enc.Progress(tc.ID, []byte(o.redactJSON(string(payload(tc.Name, pending))))); pending = nil }
		stopAll       = func() { stopTimer(flush); stopTimer(live) }
	)
	defer stopAll()
	for {
		select {
		case <-mb.wake:
		case <-flushC:
			flushC = nil
			if pending != nil {
				send()
			}
			continue
		case <-liveC:
			liveC = nil
			cancel(errLiveness)
			continue
		}
		p, streaming, ended := mb.take()
		if ended {
			if p != nil {
				pending = p
			}
			if pending != nil {
				send() // the last report always goes out
			}
			return
		}
		if streaming && e.liveness > 0 && cancelable(liveC, live) {
			live = resetTimer(live, e.liveness)
			liveC = live.C
		}
		if p != nil {
			pending = p
			if flushC == nil {
				flush = resetTimer(flush, o.set.o.Interval)
				flushC = flush.C
			}
		}
	}
}

// cancelable reports whether the liveness watchdog is still to be kept: not yet armed, or
// armed and not fired (a fired one already canceled the call).
func cancelable(liveC <-chan time.Time, live *time.Timer) bool { return live == nil || liveC != nil }

func resetTimer(t *time.Timer, d time.Duration) *time.Timer {
	if t == nil {
		return time.NewTimer(d)
	}
	t.Reset(d)
	return t
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// outcome classifies how a call ended, with the text for the client and the model (before
// redaction). A tool's own error says what the tool said; a failure to reach it says only
// that (a transport error names hosts and paths: they go to the log).
func (o *Offer) outcome(ctx, cctx context.Context, e *entry, output json.RawMessage, err error) result {
	cause := context.Cause(cctx)
	var f *failure
	var ue *url.Error
	switch {
	case err == nil:
		s := string(output)
		var str string
		if json.Unmarshal(output, &str) == nil {
			s = str // a string result is the text the model reads
		}
		return result{telemetry.ToolOK, s}
	case ctx.Err() != nil:
		return result{telemetry.ToolCanceled, "The run was stopped before the tool finished."}
	case errors.Is(cause, errLiveness):
		return result{telemetry.ToolLiveness, "The tool went silent for " + e.liveness.String() + " (its liveness limit) and was canceled."}
	case errors.Is(cause, errTimeout):
		return result{telemetry.ToolTimeout, "The tool did not finish within " + e.timeout.String() + " (its timeout) and was canceled."}
	case errors.As(err, &f):
		return result{telemetry.ToolError, f.msg}
	case errors.As(err, &ue):
		return result{telemetry.ToolError, "The tool could not be reached."}
	}
	return result{telemetry.ToolError, "The tool failed: " + err.Error()}
}
