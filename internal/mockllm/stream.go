package mockllm

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// stream writes a 200 event stream: the preamble frames at once, then the body frames with
// first= before the first and delay= before each later one. An in-stream fault takes the
// place of body frame after= (clamped to the last frame), so it can cut anything from the
// first delta to the stream's last frame ([DONE], message_stop, response.completed).
func stream(ctx context.Context, w http.ResponseWriter, d dialect, a *answer, pre, body [][]byte) error {
	sc := a.sc
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(b []byte) error {
		if _, err := w.Write(b); err != nil || sc.flushEnd {
			return err
		}
		return rc.Flush()
	}
	if sc.flushEnd {
		defer rc.Flush()
	}
	if err := rc.Flush(); err != nil { // headers now: the client's first-event clock starts here
		return err
	}
	for _, f := range pre {
		if err := send(f); err != nil {
			return err
		}
	}
	at := -1
	if sc.fail != "" {
		at = min(sc.after, max(len(body)-1, 0))
	}
	for i := 0; i < len(body) || i == at; i++ {
		wait := sc.delay
		if i == 0 {
			wait = sc.first
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		if i == at {
			next := d.last()
			if i < len(body) {
				next = body[i]
			}
			return fault(ctx, d, a, send, next, len(pre)+i)
		}
		if err := send(body[i]); err != nil {
			return err
		}
	}
	return nil
}

// fault injects a.sc.fail where the frame next would have gone, after seq frames.
func fault(ctx context.Context, d dialect, a *answer, send func([]byte) error, next []byte, seq int) error {
	switch a.sc.fail {
	case "error", "ratelimit", "event":
		for _, f := range d.inband(a, a.sc, seq) {
			if err := send(f); err != nil {
				return err
			}
		}
		return nil
	case "stall":
		<-ctx.Done()
		return ctx.Err()
	case "cut":
		return send(half(next))
	case "abort":
		return errAbort
	}
	return nil
}

// half is the first half of an event's line, at least 8 bytes ("data: [D"), without its
// terminating blank line: a tail no SSE decoder can complete.
func half(frame []byte) []byte {
	line := bytes.TrimRight(frame, "\n")
	return line[:min(len(line), max(len(line)/2, 8))]
}

// complete writes the non-streamed answer after the time the stream would have taken. Faults
// map to what a non-streaming upstream does: error and event answer the dialect's server
// error (500; Anthropic 529 overloaded), ratelimit 429, stall sends headers then nothing,
// cut sends half the body, abort sends half and cuts the connection; end= does not apply.
func complete(ctx context.Context, w http.ResponseWriter, d dialect, a *answer) error {
	sc := a.sc
	_, frames := d.frames(a)
	if err := sleep(ctx, sc.first+sc.delay*time.Duration(max(len(frames)-1, 0))); err != nil {
		return err
	}
	switch sc.fail {
	case "error", "event", "ratelimit":
		status, body := d.scripted(sc, a.model)
		writeError(w, status, body, retryAfter(sc))
		return nil
	case "stall":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if err := http.NewResponseController(w).Flush(); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	case "cut", "abort":
		b := marshal(d.whole(a))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(b[:len(b)/2]); err != nil {
			return err
		}
		if err := http.NewResponseController(w).Flush(); err != nil {
			return err
		}
		if sc.fail == "abort" {
			return errAbort
		}
		return nil
	}
	writeJSON(w, http.StatusOK, d.whole(a))
	return nil
}
