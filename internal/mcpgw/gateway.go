package mcpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/reqbody"
	"github.com/sluice-gw/sluice/internal/tools"
	"github.com/sluice-gw/sluice/internal/tools/mcp"
)

// Versions are the protocol versions the gateway speaks, newest first: a client that asks
// for one of them gets it; any other gets the newest (MCP lifecycle, "Version Negotiation").
// 2025-11-25 is what @modelcontextprotocol/sdk 1.32 asks for; what the gateway serves (tools,
// progress, cancellation, list changes) is the same in each.
var Versions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Servers is what the gateway needs of the configured MCP servers (implemented by
// *tools.Set).
type Servers interface {
	MCPServers() []string
	MCPTools(ctx context.Context, server string) []tools.Listed
	MCPCall(ctx context.Context, server, name string, args json.RawMessage, alive func()) (*mcp.Call, error)
	MCPTimeout(server string) (timeout, liveness time.Duration)
	WaitChange(ctx context.Context, since uint64) (uint64, error)
	Generation() uint64
}

var _ Servers = (*tools.Set)(nil)

// Options are a Gateway's dependencies.
type Options struct {
	Servers Servers
	// Store keeps the sessions (nil: Memory).
	Store Store
	// Bus passes cancellations to the replica running the call (nil: none; bus.go).
	Bus Bus
	// SessionTTL is how long a session lives unused (default 24h); each request renews it.
	SessionTTL time.Duration
	// RedactJSON and RedactText are the redaction rules (nil: off): results, errors and
	// progress messages pass them before they reach the client.
	RedactJSON, RedactText func(string) string
	// Heartbeat is the longest silence of an event stream before a keepalive comment (0:
	// none); WriteTimeout cuts a client that stops reading (0: none).
	Heartbeat, WriteTimeout time.Duration
	// Origins are the browser origins that may call (cors.allowed_origins; "*": any). A
	// request with another Origin is refused 403, against DNS rebinding (MCP Streamable
	// HTTP, "Security Warning"); one without Origin (an agent, an SDK outside a browser)
	// is served.
	Origins []string
	// MaxBody bounds a message (default 4 MiB); BodyTimeout, the time its body may take to
	// arrive (limits.body_timeout; 0: none).
	MaxBody     int64
	BodyTimeout time.Duration
	Log         *slog.Logger
}

// Caller is who sends a request, as the edge authenticated it.
type Caller struct {
	// Key is the caller's key id ("" with auth off); a session belongs to the key that
	// started it. KeyName names it in spans.
	Key, KeyName string
	// All lets the caller use every tool (auth off). Otherwise Servers are the MCP servers
	// the key may use ("*": all; empty: all, when Tools is set; else none) and Tools, when
	// set, the server__tool names it may use, as path.Match patterns: on top of each
	// server's own filter.
	All            bool
	Servers, Tools []string
	// Team, when set, is the MCP access of the key's team (auth.Team.AllowsMCP): a tool
	// must pass it as well as Servers and Tools, in the listing and in a call (issue 37).
	// nil: the key has no team, or its team restricts nothing.
	Team func(server, name string) bool
	// Admit is asked before each tools/call (the key's rpm and tool_calls_per_minute); a
	// *Refusal it returns is the caller's answer, any other error an unavailable gateway.
	// nil: no limits.
	Admit func(ctx context.Context) error
	// Check screens a call's arguments (input guardrails); a *Refusal it returns refuses
	// the call. nil: none.
	Check func(ctx context.Context, args string) error
}

// Refusal is a call the edge refused: a rate limit (Limited) or a guardrail.
type Refusal struct {
	Message    string
	Limited    bool
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.Message }

// allows reports whether the caller may use the tool server__tool of server: the one rule
// of both tools/list and tools/call, so a tool hidden from a caller cannot be called.
func (c *Caller) allows(server, name string) bool {
	if c.All {
		return true
	}
	servers := len(c.Servers) == 0 && len(c.Tools) > 0 || slices.Contains(c.Servers, "*") || slices.Contains(c.Servers, server)
	if !servers || c.Team != nil && !c.Team(server, name) {
		return false
	}
	return len(c.Tools) == 0 || tools.MatchAny(c.Tools, name)
}

// Gateway serves /mcp. Safe for concurrent use.
type Gateway struct {
	o Options

	mu       sync.Mutex
	inflight map[string]context.CancelCauseFunc // by cancelKey: the calls running here
	sub      io.Closer                          // of the Bus; nil: none
}

// New returns the gateway of the servers o names; with a Bus, Close ends its subscription.
func New(o Options) *Gateway {
	if o.Store == nil {
		o.Store = &Memory{}
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 24 * time.Hour
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 4 << 20
	}
	if o.RedactJSON == nil {
		o.RedactJSON = func(s string) string { return s }
	}
	if o.RedactText == nil {
		o.RedactText = func(s string) string { return s }
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{o: o, inflight: map[string]context.CancelCauseFunc{}}
	if o.Bus != nil {
		sub, err := o.Bus.Subscribe(context.Background(), func(key string) { g.cancelLocal(key) })
		if err != nil {
			o.Log.Warn("mcp gateway: no subscription to the other replicas' cancellations yet", "err", err.Error())
		}
		g.sub = sub
	}
	return g
}

// Serve answers one request of c to the endpoint: POST (a message), GET (the stream of the
// gateway's notifications) or DELETE (the end of a session).
func (g *Gateway) Serve(w http.ResponseWriter, r *http.Request, c Caller) {
	if o := r.Header.Get("Origin"); o != "" && !slices.Contains(g.o.Origins, "*") && !slices.Contains(g.o.Origins, o) {
		writeJSON(w, http.StatusForbidden, errorResponse(nil, codeInvalidRequest, "The Origin "+o+" may not call this gateway (cors.allowed_origins).", nil))
		return
	}
	switch r.Method {
	case http.MethodPost:
		g.post(w, r, &c)
	case http.MethodGet:
		g.listen(w, r, &c)
	case http.MethodDelete:
		g.end(w, r, &c)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, errorResponse(nil, codeInvalidRequest, "Use POST, GET or DELETE.", nil))
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// accepts reports whether the request's Accept header names the media type mt.
func accepts(r *http.Request, mt string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && (t == mt || t == "*/*") {
			return true
		}
	}
	return false
}

// errSession is a request whose session the gateway cannot serve; status and message say
// why.
type errSession struct {
	status int
	msg    string
}

func (e *errSession) Error() string { return e.msg }

// load finds the request's session: 400 without Mcp-Session-Id, 404 for a session that is
// unknown, expired, ended or another key's (the client starts a new one: MCP Streamable
// HTTP, "Session Management"), 503 when the store cannot be reached.
func (g *Gateway) load(r *http.Request, c *Caller) (string, *session, error) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return "", nil, &errSession{http.StatusBadRequest, "Mcp-Session-Id is required: send initialize first."}
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(Versions, v) {
		return "", nil, &errSession{http.StatusBadRequest, "Unsupported MCP-Protocol-Version " + v + "; supported: " + strings.Join(Versions, ", ") + "."}
	}
	data, err := g.o.Store.Get(r.Context(), id, g.o.SessionTTL)
	if err != nil {
		g.o.Log.Warn("mcp gateway: the session store failed", "err", err.Error())
		return "", nil, &errSession{http.StatusServiceUnavailable, "The gateway cannot reach its session store. Retry shortly."}
	}
	var s session
	if data == nil || json.Unmarshal(data, &s) != nil || s.Key != c.Key {
		return "", nil, &errSession{http.StatusNotFound, "Session not found: it expired or ended. Send initialize to start a new one."}
	}
	return id, &s, nil
}

func sessionFailure(w http.ResponseWriter, id json.RawMessage, err error) {
	var es *errSession
	if !errors.As(err, &es) {
		es = &errSession{http.StatusInternalServerError, "internal error"}
	}
	code := codeSession
	if es.status == http.StatusServiceUnavailable {
		code = codeUnavailable
	}
	writeJSON(w, es.status, errorResponse(id, code, es.msg, nil))
}

// post handles one message.
func (g *Gateway) post(w http.ResponseWriter, r *http.Request, c *Caller) {
	body, err := reqbody.Read(w, r, g.o.MaxBody, g.o.BodyTimeout)
	switch llm.KindOf(err) {
	case llm.KindNone:
	case llm.TooLarge:
		writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse(nil, codeInvalidRequest, "The message is larger than the gateway's limit.", nil))
		return
	case llm.Canceled:
		return // the client left
	default: // too slow
		writeJSON(w, llm.HTTPStatus(err), errorResponse(nil, codeInvalidRequest, llm.Public(err).Message, nil))
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		writeJSON(w, http.StatusBadRequest, errorResponse(nil, codeInvalidRequest,
			"JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one message per request.", nil))
		return
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		writeJSON(w, http.StatusBadRequest, errorResponse(nil, codeParse, "The body is not a JSON-RPC message: "+err.Error(), nil))
		return
	}
	isRequest := m.Method != "" && len(m.ID) > 0
	switch {
	case m.JSONRPC != "2.0":
		writeJSON(w, http.StatusBadRequest, errorResponse(m.ID, codeInvalidRequest, `"jsonrpc" must be "2.0".`, nil))
		return
	case isRequest && !validID(m.ID):
		writeJSON(w, http.StatusBadRequest, errorResponse(nil, codeInvalidRequest, "A request id must be a string or a number.", nil))
		return
	case m.Method == "" && len(m.ID) == 0:
		writeJSON(w, http.StatusBadRequest, errorResponse(nil, codeInvalidRequest, "The message is neither a request, a notification nor a response.", nil))
		return
	}
	if m.Method == "initialize" && isRequest {
		g.initialize(w, r, c, &m)
		return
	}
	sid, s, err := g.load(r, c)
	if err != nil {
		sessionFailure(w, m.ID, err)
		return
	}
	if !isRequest {
		// A notification or a response (to the gateway's pings, which it does not send):
		// taken, nothing to answer (Streamable HTTP: 202 Accepted).
		if m.Method == "notifications/cancelled" {
			g.cancelled(sid, m.Params)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "ping":
		writeJSON(w, http.StatusOK, response(m.ID, struct{}{}))
	case "tools/list":
		writeJSON(w, http.StatusOK, response(m.ID, map[string]any{"tools": g.list(r.Context(), c)}))
	case "tools/call":
		g.call(w, r, c, sid, s, &m)
	default:
		writeJSON(w, http.StatusOK, errorResponse(m.ID, codeMethodNotFound, "Method not found: "+m.Method+" (the gateway serves tools only).", nil))
	}
}

// initialize starts a session (MCP lifecycle): the version agreed, the gateway's
// capabilities (tools, with list changes), and the session's id in Mcp-Session-Id.
func (g *Gateway) initialize(w http.ResponseWriter, r *http.Request, c *Caller, m *message) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.ProtocolVersion == "" {
		writeJSON(w, http.StatusOK, errorResponse(m.ID, codeInvalidParams, "initialize needs params.protocolVersion.", nil))
		return
	}
	version := Versions[0]
	if slices.Contains(Versions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	s := session{Key: c.Key, Version: version, Client: p.ClientInfo, Created: time.Now().UTC()}
	data, _ := json.Marshal(s)
	id := newSessionID()
	if err := g.o.Store.Put(r.Context(), id, data, g.o.SessionTTL); err != nil {
		g.o.Log.Warn("mcp gateway: the session store failed", "err", err.Error())
		sessionFailure(w, m.ID, &errSession{http.StatusServiceUnavailable, "The gateway cannot reach its session store. Retry shortly."})
		return
	}
	w.Header().Set("Mcp-Session-Id", id)
	writeJSON(w, http.StatusOK, response(m.ID, map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]any{"name": "sluice", "title": "Sluice MCP gateway", "version": "1"},
		"instructions":    "Tools of several MCP servers, each named <server>__<tool>.",
	}))
}

// end is DELETE: the client ends its session.
func (g *Gateway) end(w http.ResponseWriter, r *http.Request, c *Caller) {
	sid, _, err := g.load(r, c)
	if err != nil {
		sessionFailure(w, nil, err)
		return
	}
	if err := g.o.Store.Delete(r.Context(), sid); err != nil {
		sessionFailure(w, nil, &errSession{http.StatusServiceUnavailable, "The gateway cannot reach its session store. Retry shortly."})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// list is the tools the caller may use, of every server in name order, each in its server's
// order: the server's listing (annotations, outputSchema...) with the gateway's name.
func (g *Gateway) list(ctx context.Context, c *Caller) []json.RawMessage {
	out := []json.RawMessage{}
	for _, srv := range g.o.Servers.MCPServers() {
		for _, t := range g.o.Servers.MCPTools(ctx, srv) {
			if !c.allows(srv, t.Name) {
				continue
			}
			out = append(out, renamed(t))
		}
	}
	return out
}

// renamed is t's listing with the gateway's name for it.
func renamed(t tools.Listed) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(t.Tool.Raw, &m) != nil || m == nil {
		m = map[string]json.RawMessage{"inputSchema": t.Tool.InputSchema}
		if d, _ := json.Marshal(t.Tool.Description); t.Tool.Description != "" {
			m["description"] = d
		}
	}
	if len(m["inputSchema"]) == 0 || string(m["inputSchema"]) == "null" {
		m["inputSchema"] = json.RawMessage(`{"type":"object"}`)
	}
	m["name"], _ = json.Marshal(t.Name)
	b, _ := json.Marshal(m)
	return b
}
