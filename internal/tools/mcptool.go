package tools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/tools/mcp"
)

// server is a configured MCP server: its client, and its tools as last listed.
type server struct {
	name   string
	cfg    MCP
	client *mcp.Client
	log    *slog.Logger

	kick chan struct{} // capacity 1: the server said its list changed
	bump func()        // a listing succeeded: the set's generation moves on

	mu     sync.Mutex
	tools  []*entry
	listed bool
	failed time.Time     // when the last listing failed (zero: it did not)
	busy   chan struct{} // closed when the listing in progress ends; nil: none
}

// relist is how long a server whose listing failed is left alone (its last list, or none, is
// offered meanwhile, and runs do not wait for it), and the longest a listing may take: a run
// waits for it before its first round.
const relist = 10 * time.Second

// entries returns the server's tools, listing them first when they were never listed or the
// server said they changed (notifications/tools/list_changed). One listing, bounded by the
// server's timeout and relist, runs at a time; other callers wait for it. A failed listing
// keeps the last list.
func (s *server) entries(ctx context.Context) []*entry {
	for {
		s.mu.Lock()
		if b := s.busy; b != nil {
			s.mu.Unlock()
			select {
			case <-b:
				continue
			case <-ctx.Done():
				return s.current()
			}
		}
		fresh := s.listed && !s.client.Changed()
		resting := !s.failed.IsZero() && time.Since(s.failed) < relist
		if fresh || resting {
			t := s.tools
			s.mu.Unlock()
			return t
		}
		b := make(chan struct{})
		s.busy = b
		s.mu.Unlock()
		lctx, cancel := context.WithTimeout(ctx, min(s.cfg.Timeout, relist))
		list, err := s.client.Tools(lctx)
		cancel()
		s.mu.Lock()
		if err != nil {
			s.failed = time.Now()
			s.log.Warn("mcp: listing the tools failed", "server", s.name, "err", err.Error())
		} else {
			s.tools, s.listed, s.failed = s.build(list), true, time.Time{}
			s.bump() // the MCP gateway tells its clients (notifications/tools/list_changed)
		}
		s.busy = nil
		close(b)
		s.mu.Unlock()
	}
}

// follow lists the tools at start and whenever the server says they changed, until ctx ends.
func (s *server) follow(ctx context.Context) {
	for {
		s.entries(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
	}
}

// changed is the client's word that the list changed: follow lists it again.
func (s *server) changed() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *server) current() []*entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// build names the server's tools for the model: server__tool, made to match
// ^[a-zA-Z0-9_-]{1,64}$ (other characters become _, the name is cut at 64); a tool the
// filter does not pass, or whose name collides with an earlier one, is left out.
func (s *server) build(list []mcp.Tool) []*entry {
	var out []*entry
	seen := map[string]bool{}
	for _, t := range list {
		if !s.cfg.Passes(t.Name) {
			s.log.Debug("mcp: tool filtered out", "server", s.name, "tool", t.Name)
			continue
		}
		name := modelName(s.name + "__" + t.Name)
		if seen[name] || t.Name == "" {
			s.log.Warn("mcp: tool left out: its name is empty or taken", "server", s.name, "tool", t.Name)
			continue
		}
		seen[name] = true
		out = append(out, &entry{def: def(name, t.Description, t.InputSchema), label: s.name,
			timeout: s.cfg.Timeout, liveness: s.cfg.Liveness, kind: &mcpKind{client: s.client, tool: t.Name, src: t}})
	}
	return out
}

// modelName maps a name to what tool names may be: ^[a-zA-Z0-9_-]{1,64}$.
func modelName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 64)])
}

// mcpKind calls one tool of a server.
type mcpKind struct {
	client *mcp.Client
	tool   string   // the server's name for it
	src    mcp.Tool // as the server listed it
}

func (k *mcpKind) start(ctx context.Context, args json.RawMessage, _ string, alive func()) (call, error) {
	c, err := k.client.Call(ctx, k.tool, args, alive)
	if err != nil {
		return nil, err
	}
	return &mcpCall{c: c}, nil
}

type mcpCall struct{ c *mcp.Call }

func (c *mcpCall) Streaming() bool { return c.c.Streaming() }
func (c *mcpCall) Close() error    { return c.c.Close() }

func (c *mcpCall) Recv() (event, error) {
	ev, err := c.c.Recv()
	if err != nil {
		if re := (*mcp.RPCError)(nil); errors.As(err, &re) {
			return event{}, failed(re.Message) // the server refused the call: its words
		}
		return event{}, err
	}
	if p := ev.Progress; p != nil {
		done := p.Progress
		return event{progress: &Progress{Done: &done, Total: p.Total, Message: p.Message}}, nil
	}
	r := ev.Result
	text, plain := r.Text()
	switch {
	case r.IsError:
		if !plain || text == "" {
			text = "the tool failed"
		}
		return event{}, failed(text)
	case len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null":
		return event{output: r.StructuredContent}, nil
	case plain:
		out, _ := json.Marshal(text)
		return event{output: out}, nil
	}
	out, _ := json.Marshal(r.Content) // images, resources: as the server wrote them
	return event{output: out}, nil
}
