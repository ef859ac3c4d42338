// Package mcptest is an MCP server for tests, over Streamable HTTP and over stdio
// (stdio.go): a real session life cycle (initialize, Mcp-Session-Id, 404 or 400 for a session
// it does not know, DELETE), tools/list, tools/call answered as an event stream with progress
// notifications, a GET stream that carries notifications/tools/list_changed, and what a test
// needs to check a client: a forced session expiry (a restart), counts of initializations
// and runs, and the cancellations received. Main makes a test binary a stdio server.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// Tool is a tool the server offers. Run is called once per call that runs, with a function
// that sends a progress notification; it returns the result text, or an error result.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // nil: {"type":"object"}
	Run         func(ctx context.Context, args json.RawMessage, progress func(done, total float64, msg string)) (string, bool)
}

// Server is the MCP server; safe for concurrent use. The zero value has no tools.
type Server struct {
	mu        sync.Mutex
	tools     []Tool
	sessions  map[string]bool
	n         int
	listeners map[chan struct{}]bool // GET streams, signaled when the tools change
	inits     int
	runs      map[string]int
	cancelled []string
	// NoListen answers GET with 405, as a server without a GET stream does.
	NoListen bool
	// ExpiredStatus is the answer to a session it does not know: 404 (the default, as the
	// specification says), or 400 with the JSON-RPC error server-everything sends.
	ExpiredStatus int
	// Listening, if set, is signaled (without blocking) whenever a GET stream is open and
	// will carry the next change: a test over real sockets waits on it before SetTools.
	Listening chan struct{}
	// Cancels, if set, is sent (without blocking) the request id of every
	// notifications/cancelled received, for a test to wait on.
	Cancels chan string
}

// New returns a server offering tools.
func New(tools ...Tool) *Server { return &Server{tools: tools} }

// SetTools replaces the tools and notifies every open GET stream.
func (s *Server) SetTools(tools ...Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = tools
	for ch := range s.listeners {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Expire forgets every session, as a server that restarted: the next request of a client
// is answered ExpiredStatus.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = nil
}

// Inits is how many sessions were started; Runs how many calls of the tool ran; Cancelled
// the request ids of the notifications/cancelled received.
func (s *Server) Inits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inits
}

func (s *Server) Runs(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[tool]
}

func (s *Server) Cancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cancelled...)
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   any             `json:"error,omitempty"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.listen(w, r)
	case http.MethodDelete:
		s.mu.Lock()
		delete(s.sessions, r.Header.Get("Mcp-Session-Id"))
		s.mu.Unlock()
	case http.MethodPost:
		s.post(w, r)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *Server) known(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[r.Header.Get("Mcp-Session-Id")]
}

// unknown answers a request of a session the server does not know.
func (s *Server) unknown(w http.ResponseWriter) {
	if s.ExpiredStatus == http.StatusBadRequest {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(mustJSON(message{ID: json.RawMessage("null"), Error: map[string]any{"code": -32000,
			"message": "Bad Request: No valid session ID provided"}}))
		return
	}
	http.Error(w, "unknown session", http.StatusNotFound)
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	var m message
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	if m.Method == "initialize" {
		s.mu.Lock()
		s.n++
		s.inits++
		id := "sess-" + strconv.Itoa(s.n)
		if s.sessions == nil {
			s.sessions = map[string]bool{}
		}
		s.sessions[id] = true
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
		writeJSON(w, message{ID: m.ID, Result: s.initialized(!s.NoListen)})
		return
	}
	if !s.known(r) {
		s.unknown(w)
		return
	}
	switch {
	case m.Method == "notifications/cancelled":
		s.cancel(m)
		w.WriteHeader(http.StatusAccepted)
	case len(m.ID) == 0 || m.Method == "":
		w.WriteHeader(http.StatusAccepted) // notifications and responses
	case m.Method == "tools/list":
		writeJSON(w, message{ID: m.ID, Result: s.list()})
	case m.Method == "tools/call":
		s.call(w, r, m)
	default:
		writeJSON(w, message{ID: m.ID, Error: map[string]any{"code": -32601, "message": "method not found"}})
	}
}

func (s *Server) initialized(listChanged bool) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"protocolVersion": "2025-06-18",
		"capabilities": map[string]any{"tools": map[string]any{"listChanged": listChanged}},
		"serverInfo":   map[string]any{"name": "mcptest", "version": "1"}}
}

func (s *Server) list() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []map[string]any{}
	for _, t := range s.tools {
		schema := t.Schema
		if schema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		list = append(list, map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema})
	}
	return map[string]any{"tools": list}
}

// callParams are a tools/call's.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		Token json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// lookup finds the call's tool and counts its run; nil: the server has none of that name.
func (s *Server) lookup(m message) (*Tool, callParams) {
	var p callParams
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.tools {
		if s.tools[i].Name == p.Name {
			if s.runs == nil {
				s.runs = map[string]int{}
			}
			s.runs[p.Name]++
			t := s.tools[i]
			return &t, p
		}
	}
	return nil, p
}

// run runs the call's tool, sending its progress and then its result with out.
func run(ctx context.Context, m message, tool *Tool, p callParams, out func(message)) {
	progress := func(done, total float64, msg string) {
		if len(p.Meta.Token) == 0 {
			return
		}
		out(message{Method: "notifications/progress", Params: mustJSON(map[string]any{
			"progressToken": p.Meta.Token, "progress": done, "total": total, "message": msg})})
	}
	text, isErr := tool.Run(ctx, p.Arguments, progress)
	out(message{ID: m.ID, Result: map[string]any{
		"content": []map[string]any{{"type": "text", "text": text}}, "isError": isErr}})
}

func unknownTool(m message, p callParams) message {
	return message{ID: m.ID, Error: map[string]any{"code": -32602, "message": "unknown tool " + p.Name}}
}

// call runs a tool and answers as an event stream: progress notifications, then the result.
func (s *Server) call(w http.ResponseWriter, r *http.Request, m message) {
	tool, p := s.lookup(m)
	if tool == nil {
		writeJSON(w, unknownTool(m, p))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	run(r.Context(), m, tool, p, func(m message) { event(w, rc, m) })
}

// cancel records a notifications/cancelled and returns the id of the request it cancels.
func (s *Server) cancel(m message) string {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelled = append(s.cancelled, string(p.RequestID))
	if s.Cancels != nil {
		select {
		case s.Cancels <- string(p.RequestID):
		default:
		}
	}
	return string(p.RequestID)
}

// subscribe returns a channel signaled when the tools change, until unsubscribe.
func (s *Server) subscribe() (ch chan struct{}, unsubscribe func()) {
	ch = make(chan struct{}, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listeners == nil {
		s.listeners = map[chan struct{}]bool{}
	}
	s.listeners[ch] = true
	return ch, func() {
		s.mu.Lock()
		delete(s.listeners, ch)
		s.mu.Unlock()
	}
}

// listen serves a GET stream: notifications/tools/list_changed whenever the tools change.
func (s *Server) listen(w http.ResponseWriter, r *http.Request) {
	if s.NoListen {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.known(r) {
		s.unknown(w)
		return
	}
	ch, unsubscribe := s.subscribe()
	defer unsubscribe()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if s.Listening != nil {
		select {
		case s.Listening <- struct{}{}:
		default:
		}
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ch:
			event(w, rc, message{Method: "notifications/tools/list_changed"})
		}
	}
}

func event(w http.ResponseWriter, rc *http.ResponseController, m message) {
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", mustJSON(m))
	_ = rc.Flush()
}

func writeJSON(w http.ResponseWriter, m message) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(mustJSON(m))
}

func mustJSON(v any) json.RawMessage {
	m, ok := v.(message)
	if ok {
		m.JSONRPC = "2.0"
		v = m
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
