package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/tools"
	"github.com/sluice-gw/sluice/internal/tools/mcp"
)

// Why a call ended early: the client cancelled it (notifications/cancelled), or the
// server's timeout ran out.
var (
	errCancelled = errors.New("the client cancelled the call")
	errTimeout   = errors.New("the MCP server's timeout ran out")
	errSilent    = errors.New("the MCP server went silent for longer than its liveness")
)

// callParams are tools/call's params.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// call runs tools/call: the tool's server is the part of its name before "__" (server names
// cannot contain it). A tool the caller may not use, or its server's filter does not pass,
// is unknown, as if it did not exist. Limits, then guardrails, then the call: its progress
// and result go out as an event stream when the client accepts one, else the result alone.
func (g *Gateway) call(w http.ResponseWriter, r *http.Request, c *Caller, sid string, _ *session, m *message) {
	var p callParams
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Name == "" {
		writeJSON(w, http.StatusOK, errorResponse(m.ID, codeInvalidParams, "tools/call needs params.name.", nil))
		return
	}
	if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage(`{}`)
	}
	server, _, _ := strings.Cut(p.Name, "__")
	unknown := errorResponse(m.ID, codeInvalidParams, "Unknown tool: "+p.Name, nil)
	if !c.allows(server, p.Name) || !g.offered(r.Context(), server, p.Name) {
		writeJSON(w, http.StatusOK, unknown)
		return
	}
	ctx := r.Context()
	if c.Admit != nil {
		if err := c.Admit(ctx); err != nil {
			writeJSON(w, http.StatusOK, refusal(m.ID, err))
			return
		}
	}
	if c.Check != nil {
		if err := c.Check(ctx, string(p.Arguments)); err != nil {
			writeJSON(w, http.StatusOK, refusal(m.ID, err))
			return
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if t, _ := g.o.Servers.MCPTimeout(server); t > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, t, errTimeout)
		defer stop()
	}
	key := cancelKey(sid, m.ID)
	g.mu.Lock()
	g.inflight[key] = cancel
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.inflight, key)
		g.mu.Unlock()
	}()

	out := g.reply(w, r)
	defer out.close()
	start := time.Now()
	outcome := g.run(ctx, cancel, out, server, &p, m.ID)
	telemetry.Tool(r.Context(), telemetry.ToolRun{Name: p.Name, Label: server, Tool: p.Name, Key: c.KeyName,
		CallID: string(m.ID), Start: start, Duration: time.Since(start), Outcome: outcome})
}

// offered reports whether server lists name and its filter passes it.
func (g *Gateway) offered(ctx context.Context, server, name string) bool {
	for _, t := range g.o.Servers.MCPTools(ctx, server) {
		if t.Name == name {
			return true
		}
	}
	return false
}

// refusal is the answer to a call the edge refused.
func refusal(id json.RawMessage, err error) []byte {
	var rf *Refusal
	switch {
	case errors.As(err, &rf) && rf.Limited:
		var data any
		if rf.RetryAfter > 0 {
			data = map[string]any{"retry_after_ms": rf.RetryAfter.Milliseconds()}
		}
		return errorResponse(id, codeLimited, rf.Message, data)
	case errors.As(err, &rf):
		return errorResponse(id, codeRefused, rf.Message, nil)
	}
	return errorResponse(id, codeUnavailable, "The gateway cannot check this call's limits now. Retry shortly.", nil)
}

// run calls the tool and sends its progress and its answer to out; it returns the outcome
// (a telemetry.Tool* value).
func (g *Gateway) run(ctx context.Context, cancel context.CancelCauseFunc, out *replier, server string, p *callParams, id json.RawMessage) string {
	w := &watchdog{cancel: cancel}
	k, err := g.o.Servers.MCPCall(ctx, server, p.Name, p.Arguments, w.alive)
	if err != nil {
		return g.failed(ctx, out, server, id, err)
	}
	defer k.Close() // a call ended before its result is cancelled at the server
	if _, live := g.o.Servers.MCPTimeout(server); live > 0 && k.Streaming() {
		defer w.arm(live)()
	}
	for {
		ev, err := k.Recv()
		if err != nil {
			return g.failed(ctx, out, server, id, err)
		}
		if pr := ev.Progress; pr != nil {
			if len(p.Meta.ProgressToken) > 0 {
				params := map[string]any{"progressToken": p.Meta.ProgressToken, "progress": pr.Progress}
				if pr.Total != nil {
					params["total"] = *pr.Total
				}
				if pr.Message != "" {
					params["message"] = g.o.RedactText(pr.Message)
				}
				out.notify(notification("notifications/progress", params))
			}
			continue
		}
		raw := ev.Result.Raw
		if len(raw) == 0 {
			raw, _ = json.Marshal(ev.Result)
		}
		out.final(encode(message{ID: id, Result: json.RawMessage(g.o.RedactJSON(string(raw)))}))
		if ev.Result.IsError {
			return telemetry.ToolError
		}
		return telemetry.ToolOK
	}
}

// failed answers a call that ended without a result: the server's JSON-RPC error as it sent
// it (redacted); a timeout or an unreachable server as an error result (MCP: tool execution
// errors are results, so that the model sees them); a cancelled call, nothing (MCP
// "Cancellation": no response to a cancelled request).
func (g *Gateway) failed(ctx context.Context, out *replier, server string, id json.RawMessage, err error) string {
	var re *mcp.RPCError
	t, live := g.o.Servers.MCPTimeout(server)
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimeout):
		out.final(response(id, errorResult("The MCP server '"+server+"' did not answer within "+t.String()+" (its timeout); the call was cancelled.")))
		return telemetry.ToolTimeout
	case errors.Is(cause, errSilent):
		out.final(response(id, errorResult("The MCP server '"+server+"' went silent for "+live.String()+" (its liveness limit); the call was cancelled.")))
		return telemetry.ToolLiveness
	case cause != nil:
		return telemetry.ToolCanceled // the client cancelled, or left
	case errors.As(err, &re):
		data := re.Data
		if len(data) > 0 {
			data = json.RawMessage(g.o.RedactJSON(string(data)))
		}
		out.final(encode(message{ID: id, Error: &rpcError{Code: re.Code, Message: g.o.RedactText(re.Message), Data: data}}))
		return telemetry.ToolError
	case errors.Is(err, tools.ErrNotOffered):
		out.final(errorResponse(id, codeInvalidParams, "Unknown tool", nil))
		return telemetry.ToolError
	}
	// The error may name the server's URL, with credentials in it: the log has it, the
	// client a plain sentence.
	g.o.Log.Warn("mcp gateway: a tool call failed", "server", server, "err", err.Error())
	out.final(response(id, errorResult("The MCP server '"+server+"' failed to answer the call.")))
	return telemetry.ToolError
}

// watchdog cancels a call whose streamed answer stays silent for the server's liveness:
// any byte of the answer is a sign of life. The timer is its only goroutine.
type watchdog struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	t      *time.Timer
	every  time.Duration
}

// alive is called by the call's reader whenever bytes arrive.
func (w *watchdog) alive() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Reset(w.every)
	}
}

// arm starts watching, and returns what stops it.
func (w *watchdog) arm(every time.Duration) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.every = every
	w.t = time.AfterFunc(every, func() { w.cancel(errSilent) })
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.t.Stop()
	}
}

func errorResult(text string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": text}}, "isError": true}
}

// cancelled is notifications/cancelled of the session: the call it names ends, and its
// server is sent the cancellation; a call this replica does not run is the other replicas'
// to cancel (Bus).
func (g *Gateway) cancelled(sid string, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	if key := cancelKey(sid, p.RequestID); !g.cancelLocal(key) {
		g.broadcast(key)
	}
}

// replier sends the answer to one request: an event stream when the client accepts one
// (progress notifications, then the response), else the response alone as JSON. Not safe
// for concurrent use.
type replier struct {
	w    http.ResponseWriter
	ev   *sse.Writer // nil: JSON
	sent bool
}

func (g *Gateway) reply(w http.ResponseWriter, r *http.Request) *replier {
	out := &replier{w: w}
	if accepts(r, "text/event-stream") {
		out.ev = sse.NewWriter(w, sse.WriterOptions{Heartbeat: g.o.Heartbeat, WriteTimeout: g.o.WriteTimeout})
		_ = out.ev.Start(func(http.Header) {}) // at once: a long call shows it is under way
	}
	return out
}

func frame(b []byte) []byte {
	return append(append([]byte("event: message\ndata: "), b...), '\n', '\n')
}

func (o *replier) notify(b []byte) {
	if o.ev != nil {
		_ = o.ev.Frame(frame(b))
	}
}

func (o *replier) final(b []byte) {
	o.sent = true
	if o.ev != nil {
		_ = o.ev.Frame(frame(b))
		return
	}
	writeJSON(o.w, http.StatusOK, b)
}

func (o *replier) close() {
	if o.ev != nil {
		o.ev.Close()
	} else if !o.sent {
		o.w.WriteHeader(http.StatusAccepted) // cancelled: no response (JSON mode)
	}
}

// listen is the GET stream of a session: notifications/tools/list_changed whenever a
// server's list was read anew on this replica, keepalives meanwhile, until the client leaves.
func (g *Gateway) listen(w http.ResponseWriter, r *http.Request, c *Caller) {
	if !accepts(r, "text/event-stream") {
		writeJSON(w, http.StatusNotAcceptable, errorResponse(nil, codeInvalidRequest, "GET /mcp is an event stream: accept text/event-stream.", nil))
		return
	}
	if _, _, err := g.load(r, c); err != nil {
		sessionFailure(w, nil, err)
		return
	}
	gen := g.o.Servers.Generation() // before the headers: a change once the client has them is sent
	ev := sse.NewWriter(w, sse.WriterOptions{Heartbeat: g.o.Heartbeat, WriteTimeout: g.o.WriteTimeout})
	defer ev.Close()
	if ev.Start(func(http.Header) {}) != nil {
		return
	}
	for {
		var err error
		if gen, err = g.o.Servers.WaitChange(r.Context(), gen); err != nil {
			return
		}
		if ev.Frame(frame(notification("notifications/tools/list_changed", nil))) != nil {
			return
		}
	}
}
