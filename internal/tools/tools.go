package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/tools/mcp"
)

// Spec is one configured tool (config tools:): exactly one of HTTP, MCP and Sim is set.
type Spec struct {
	Name string // what the model calls; for an MCP server, the prefix of its tools' names
	HTTP *HTTP
	MCP  *MCP
	Sim  *Sim
}

// HTTP is a tool the gateway POSTs the arguments to.
type HTTP struct {
	URL         string
	Headers     map[string]string
	Timeout     time.Duration // the whole call (0: none)
	Liveness    time.Duration // longest silence of a streamed answer (0: none)
	Description string
	Parameters  json.RawMessage // the JSON schema of the arguments
}

// MCP is an MCP server, over Streamable HTTP (URL) or a local process over stdio (Command,
// Args, Env, Dir: package mcp starts it, and starts it again when it exits); each of its
// tools that passes the filter is offered as Name__tool.
type MCP struct {
	URL      string
	Headers  map[string]string
	Command  string
	Args     []string
	Env      map[string]string
	Dir      string
	Timeout  time.Duration // one tool call, and one listing of the tools
	Liveness time.Duration
	// Allow and Deny filter the server's tools by their names on the server, as path.Match
	// patterns: a tool is offered when it matches a pattern of Allow (or Allow is empty) and
	// none of Deny. A call of a tool that is not offered never reaches the server.
	Allow, Deny []string
}

// Passes reports whether the server's tool name passes the filter. A malformed pattern
// matches nothing (the configuration checks them).
func (m *MCP) Passes(name string) bool {
	return (len(m.Allow) == 0 || MatchAny(m.Allow, name)) && !MatchAny(m.Deny, name)
}

// MatchAny reports whether name matches one of the path.Match patterns (a malformed one
// matches nothing).
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Sim is a tool run in process: Steps progress events Interval apart, then a result (or a
// failure when Fail is set).
type Sim struct {
	Steps       int
	Interval    time.Duration
	Fail        bool
	Description string
	Parameters  json.RawMessage
}

// Options are a Set's dependencies.
type Options struct {
	// Client makes the requests to HTTP tools and MCP servers (nil: a client of its own with
	// no timeout: each call has its own).
	Client *http.Client
	// RedactJSON and RedactText are the redaction rules (nil: off): progress, outputs and
	// error texts pass them before they reach a client.
	RedactJSON, RedactText func(string) string
	// Interval is the coalescing of progress: at most one event per Interval per call
	// (default 100ms).
	Interval time.Duration
	Log      *slog.Logger
}

// entry is one tool as the model sees it, and how to run it.
type entry struct {
	def      llm.Tool
	label    string // the configured name: the metric label
	timeout  time.Duration
	liveness time.Duration
	kind     kind
}

// Set is the configured tools. Safe for concurrent use; Close ends the MCP sessions.
type Set struct {
	o       Options
	static  map[string]*entry  // HTTP and simulated tools, by name
	servers map[string]*server // MCP servers, by configured name
	stop    context.CancelFunc
	wg      sync.WaitGroup
	gen     generation // of the MCP servers' lists (serve.go)
}

// New returns the set of specs and starts following each MCP server's tool list in the
// background (read at start, and again when the server says it changed), so runs find it
// ready.
func New(specs []Spec, o Options) *Set {
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Set{o: o, static: map[string]*entry{}, servers: map[string]*server{}, stop: cancel}
	for _, sp := range specs {
		switch {
		case sp.HTTP != nil:
			h := sp.HTTP
			s.static[sp.Name] = &entry{def: def(sp.Name, h.Description, h.Parameters), label: sp.Name,
				timeout: h.Timeout, liveness: h.Liveness, kind: &httpKind{url: h.URL, headers: h.Headers, client: o.Client}}
		case sp.Sim != nil:
			m := sp.Sim
			s.static[sp.Name] = &entry{def: def(sp.Name, m.Description, m.Parameters), label: sp.Name,
				kind: &simKind{steps: m.Steps, interval: m.Interval, fail: m.Fail}}
		case sp.MCP != nil:
			srv := &server{name: sp.Name, cfg: *sp.MCP, log: o.Log, kick: make(chan struct{}, 1), bump: s.gen.bump}
			m := sp.MCP
			srv.client = mcp.New(mcp.Config{URL: m.URL, Headers: m.Headers, Client: o.Client,
				Command: m.Command, Args: m.Args, Env: m.Env, Dir: m.Dir, Log: o.Log, Changed: srv.changed})
			s.servers[sp.Name] = srv
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				srv.follow(ctx)
			}()
		}
	}
	return s
}

func def(name, desc string, params json.RawMessage) llm.Tool {
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	return llm.Tool{Name: name, Description: desc, Parameters: params}
}

// Offer is what a run of an alias offering names may call: its tools as the model sees them
// now (an MCP server's list is read again if the server said it changed). redactModel also
// masks what the model is sent back (the alias's redact_input).
func (s *Set) Offer(ctx context.Context, names []string, redactModel bool) *Offer {
	o := &Offer{set: s, tools: map[string]*entry{}, redactModel: redactModel}
	add := func(e *entry) {
		if _, dup := o.tools[e.def.Name]; dup {
			s.o.Log.Warn("tool left out: its name is taken", "tool", e.def.Name, "from", e.label)
			return
		}
		o.tools[e.def.Name] = e
		o.defs = append(o.defs, e.def)
	}
	for _, n := range names {
		if e, ok := s.static[n]; ok {
			add(e)
		} else if srv, ok := s.servers[n]; ok {
			o.servers = append(o.servers, n)
			for _, e := range srv.entries(context.WithoutCancel(ctx)) {
				add(e)
			}
		}
	}
	return o
}

// Close stops reading tool lists and ends the MCP sessions.
func (s *Set) Close() error {
	s.stop()
	s.wg.Wait()
	for _, srv := range s.servers {
		_ = srv.client.Close()
	}
	return nil
}
