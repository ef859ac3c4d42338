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
// first delta to [DONE].
func stream(ctx context.Context, w http.ResponseWriter, sc *script, pre, body [][]byte) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
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
		d := sc.delay
		if i == 0 {
			d = sc.first
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
		if i == at {
			next := doneFrame
			if i < len(body) {
				next = body[i]
			}
			return fault(ctx, sc, send, next)
		}
		if err := send(body[i]); err != nil {
			return err
		}
	}
	return nil
}

// fault injects sc.fail where the frame next would have gone.
func fault(ctx context.Context, sc *script, send func([]byte) error, next []byte) error {
	switch sc.fail {
	case "error", "ratelimit":
		// A data-only error then [DONE], as OpenAI has been seen to send
		// (go-openai#396; testdata/openai-chat-instream-server-error.sse).
		if err := send(dataFrame(scriptedError(sc, ""))); err != nil {
			return err
		}
		return send(doneFrame)
	case "event":
		// Groq's shape: a named error event, no [DONE] (testdata/groq-chat-instream-error.sse).
		return send(append([]byte("event: error\n"), dataFrame(scriptedError(sc, ""))...))
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
// map to what a non-streaming upstream does: error and event answer 500, ratelimit 429, stall
// sends headers then nothing, cut sends half the body, abort sends half and cuts the
// connection; end= does not apply.
func complete(ctx context.Context, w http.ResponseWriter, sc *script, a *answer) error {
	frames := len(a.body())
	if err := sleep(ctx, sc.first+sc.delay*time.Duration(max(frames-1, 0))); err != nil {
		return err
	}
	switch sc.fail {
	case "error", "event":
		writeError(w, http.StatusInternalServerError, scriptedError(sc, a.model), retryAfter(sc))
		return nil
	case "ratelimit":
		writeError(w, http.StatusTooManyRequests, scriptedError(sc, a.model), retryAfter(sc))
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
		b := marshal(a.completion())
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
	writeJSON(w, http.StatusOK, a.completion())
	return nil
}
