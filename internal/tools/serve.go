package tools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/tools/mcp"
)

// What the MCP gateway (package mcpgw) needs of the configured MCP servers: their tools as
// their filters pass them, named server__tool as the model sees them, a call routed to the
// server with its own credentials, and word of a changed list.

// Listed is one tool of an MCP server, as offered: Name is server__tool, Tool is the
// server's own listing (Tool.Name its name there).
type Listed struct {
	Name   string
	Server string
	Tool   mcp.Tool
}

// MCPServers are the configured MCP servers' names, sorted.
func (s *Set) MCPServers() []string { return slices.Sorted(maps.Keys(s.servers)) }

// MCPTools are the tools of server that its filter passes, in the server's order (listed
// first if they never were, or the server said they changed). Unknown server: none.
func (s *Set) MCPTools(ctx context.Context, server string) []Listed {
	srv := s.servers[server]
	if srv == nil {
		return nil
	}
	var out []Listed
	for _, e := range srv.entries(ctx) {
		if k, ok := e.kind.(*mcpKind); ok {
			out = append(out, Listed{Name: e.def.Name, Server: server, Tool: k.src})
		}
	}
	return out
}

// ErrNotOffered is a call of a tool its server's filter does not pass, or that the server
// does not list: it never reaches the server.
var ErrNotOffered = errors.New("tools: the tool is not offered")

// MCPCall starts a call of the tool the gateway names name (server__tool) on its server,
// with the server's credentials, and returns it with the server's timeout (which the caller
// applies to ctx before: the call reads its answer under ctx).
func (s *Set) MCPCall(ctx context.Context, server, name string, args json.RawMessage, alive func()) (*mcp.Call, error) {
	srv := s.servers[server]
	if srv == nil {
		return nil, ErrNotOffered
	}
	for _, e := range srv.entries(context.WithoutCancel(ctx)) {
		if k, ok := e.kind.(*mcpKind); ok && e.def.Name == name {
			return k.client.Call(ctx, k.tool, args, alive)
		}
	}
	return nil, ErrNotOffered
}

// MCPTimeout is server's timeout of one call, and its liveness: the longest silence of a
// streamed answer (0: unknown server, or none).
func (s *Set) MCPTimeout(server string) (timeout, liveness time.Duration) {
	if srv := s.servers[server]; srv != nil {
		return srv.cfg.Timeout, srv.cfg.Liveness
	}
	return 0, 0
}

// Generation is a number that moves on whenever an MCP server's tool list was read anew.
func (s *Set) Generation() uint64 { return s.gen.now() }

// WaitChange blocks until the generation is past since, or ctx ends, and returns the
// generation then.
func (s *Set) WaitChange(ctx context.Context, since uint64) (uint64, error) {
	return s.gen.wait(ctx, since)
}

// generation counts list readings; waiters block on a channel closed at each count (one
// owner: the generation; replaced at each bump).
type generation struct {
	mu sync.Mutex
	n  uint64
	ch chan struct{}
}

func (g *generation) bump() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

func (g *generation) now() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *generation) wait(ctx context.Context, since uint64) (uint64, error) {
	for {
		g.mu.Lock()
		if g.n > since {
			n := g.n
			g.mu.Unlock()
			return n, nil
		}
		if g.ch == nil {
			g.ch = make(chan struct{})
		}
		ch := g.ch
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return since, ctx.Err()
		}
	}
}
