package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// reject answers err as a plain HTTP error and records its kind in the access line.
func (s *Server) reject(c echo.Context, err error) error {
	reqInfo(c).Kind = llm.KindOf(err)
	return writeError(c, err)
}

// relayOptions are the alias's relay settings: its redaction window, think filter and
// coalescing.
func (s *Server) relayOptions(chain *fallback.Chain) relay.Options {
	p := s.o.Policies[chain.Alias]
	return relay.Options{NewWindow: s.o.NewWindow, RedactJSON: s.o.RedactJSON, Start: time.Now(),
		ThinkFilter: p.ThinkFilter, Coalesce: p.Coalesce}
}

// served sets the headers that say who served.
func served(c echo.Context, run *fallback.Run, st *fallback.Stream) {
	setServed(reqInfo(c), run, st, c.Response().Header())
}

func setServed(in *telemetry.Access, run *fallback.Run, st *fallback.Stream, h http.Header) {
	in.Attempts, in.Tries = len(run.Attempts), run.Attempts
	h.Set("X-Sluice-Attempts", strconv.Itoa(in.Attempts))
	if st != nil {
		in.Target = st.Target
		h.Set("X-Sluice-Target", st.Target)
	}
}

// finished completes the round's response with who served it, and the access record with
// what a reader waited for.
func finished(in *telemetry.Access, run *fallback.Run, st *fallback.Stream, resp *llm.Response) {
	resp.Target, resp.Attempts, resp.FirstEvent = st.Target, run.Attempts, st.FirstEvent()
	if in.FirstText == 0 { // the request's first text: a later round's does not replace it
		in.FirstEvent, in.FirstText = resp.FirstEvent, resp.FirstText
	}
	in.Usage = accessUsage(resp.Usage) // the limiter reconciles its token reservation with it
	// Telemetry makes the attempt spans and the response's span attributes from these.
	in.Tries, in.Response = run.Attempts, resp
	for det, n := range resp.Redactions {
		in.Redactions += n
		if in.Masks == nil {
			in.Masks = map[string]int{}
		}
		in.Masks[det] += n
	}
}

// redactInput masks secrets in the prompt before any provider sees it (an alias's
// redact_input): text parts as text, tool-call arguments as JSON, so they still parse. The
// decoded request is the handler's own: it is changed in place.
func redactInput(req *llm.Request, text, json func(string) string) {
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Parts {
			if m.Parts[j].Type == llm.PartText {
				m.Parts[j].Text = text(m.Parts[j].Text)
			}
		}
		for j := range m.ToolCalls {
			m.ToolCalls[j].Arguments = json(m.ToolCalls[j].Arguments)
		}
	}
	// A Responses client's body goes to a Responses upstream as it came (llm.Request.Native):
	// its input and instructions are masked as JSON, every string on its own, the rest kept
	// byte for byte.
	for i := range req.Native {
		if f := &req.Native[i]; f.Name == "input" || f.Name == "instructions" {
			f.Value = []byte(json(string(f.Value)))
		}
	}
}
