package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

// search reports 20 steps 50 ms apart, then its result.
var search = mcptest.Tool{Name: "search.docs", Description: "Searches the docs.",
	Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
	Run: func(ctx context.Context, args json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		for i := 1; i <= 20; i++ {
			progress(float64(i), 20, "page")
			select {
			case <-ctx.Done():
				return "", true
			case <-time.After(50 * time.Millisecond):
			}
		}
		return "3 hits for " + string(args), false
	}}

func mcpSet(t *testing.T, srv *mcptest.Server) *Set {
	return New([]Spec{{Name: "docs", MCP: &MCP{URL: "http://mcp.test/mcp", Timeout: time.Minute, Liveness: 10 * time.Second}}},
		Options{Client: serve(t, srv)})
}

// MCP tools are offered as server__tool, their progress notifications become progress
// events, and their result the output.
func TestMCPTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(search)
		set := mcpSet(t, srv)
		defer set.Close()
		o := set.Offer(t.Context(), []string{"docs"}, false)
		if defs := o.Tools(); len(defs) != 1 || defs[0].Name != "docs__search_docs" || defs[0].Description != "Searches the docs." ||
			string(defs[0].Parameters) != `{"type":"object","properties":{"q":{"type":"string"}}}` {
			t.Fatalf("got %+v, want search.docs as docs__search_docs", defs)
		}
		enc, f := newEncoder()
		msgs, err := o.Run(t.Context(), []llmCall{toolCall("c1", "docs__search_docs", `{"q":"tls"}`)}, enc)
		if err != nil {
			t.Fatal(err)
		}
		ps := f.of("data-tool-progress")
		if n := len(ps); n < 9 || n > 10 || ps[n-1]["data"].(map[string]any)["done"] != 20.0 {
			t.Errorf("got %d progress events, want about 10 (20 steps over a second), the last at 20", n)
		}
		if out := f.of("tool-output-available"); len(out) != 1 || out[0]["output"] != `3 hits for {"q":"tls"}` || text(msgs[0]) != `3 hits for {"q":"tls"}` {
			t.Errorf("got %v and %+v, want the result", out, msgs)
		}
	})
}

// A session the server forgot is started again and the call sent again: it runs once.
func TestMCPSessionExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(search)
		set := mcpSet(t, srv)
		defer set.Close()
		o := set.Offer(t.Context(), []string{"docs"}, false)
		srv.Expire()
		f, _, err := runCallsOn(t.Context(), o, toolCall("c1", "docs__search_docs", `{}`))
		if err != nil || len(f.of("tool-output-available")) != 1 {
			t.Fatalf("got %v, %s; want the result", err, f.types())
		}
		if srv.Runs("search.docs") != 1 || srv.Inits() != 2 {
			t.Errorf("got %d runs and %d sessions, want 1 and 2", srv.Runs("search.docs"), srv.Inits())
		}
	})
}

// Stopping the run during an MCP call cancels it at the server (notifications/cancelled).
func TestMCPStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(search)
		set := mcpSet(t, srv)
		defer set.Close()
		o := set.Offer(t.Context(), []string{"docs"}, false)
		ctx, stop := context.WithCancelCause(t.Context())
		stopped := errors.New("stopped")
		time.AfterFunc(300*time.Millisecond, func() { stop(stopped) })
		f, _, err := runCallsOn(ctx, o, toolCall("c1", "docs__search_docs", `{}`))
		if !errors.Is(err, stopped) || len(f.of("tool-output-error")) != 1 {
			t.Fatalf("got %v, %s; want the stop, and the call's error", err, f.types())
		}
		if got := srv.Cancelled(); len(got) != 1 {
			t.Errorf("got cancellations %v, want the call's", got)
		}
	})
}

// The tool list follows the server: a change it notifies is read at the next offer.
func TestMCPListChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(search)
		set := mcpSet(t, srv)
		defer set.Close()
		if n := len(set.Offer(t.Context(), []string{"docs"}, false).Tools()); n != 1 {
			t.Fatalf("got %d tools, want 1", n)
		}
		synctest.Wait() // the GET stream is open
		srv.SetTools(search, mcptest.Tool{Name: "fetch", Run: search.Run})
		synctest.Wait()
		if defs := set.Offer(t.Context(), []string{"docs"}, false).Tools(); len(defs) != 2 || defs[1].Name != "docs__fetch" {
			t.Errorf("got %+v, want the new list", defs)
		}
	})
}

func TestModelName(t *testing.T) {
	for in, want := range map[string]string{"a__b": "a__b", "srv__read.file": "srv__read_file", "s__é": "s____",
		"s__" + string(make([]byte, 70)): "s__" + string(repeat('_', 61))} {
		if got := modelName(in); got != want {
			t.Errorf("modelName(%q) = %q, want %q", in, got, want)
		}
	}
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

// TestOfferAdd: the offered tools join the client's, and a client tool that takes an
// offered name (or the namespace of an offered MCP server) is refused as invalid.
func TestOfferAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(search)
		set := mcpSet(t, srv)
		defer set.Close()
		o := set.Offer(t.Context(), []string{"docs"}, false)
		own := []llm.Tool{{Name: "weather"}}
		req := &llm.Request{Tools: own}
		if err := o.Add(req, "chat"); err != nil {
			t.Fatal(err)
		}
		if len(req.Tools) != 2 || req.Tools[0].Name != "weather" || req.Tools[1].Name != "docs__search_docs" || !req.KeepReasoning {
			t.Fatalf("tools %+v, keep reasoning %v", req.Tools, req.KeepReasoning)
		}
		if len(own) != 1 || cap(own) != 1 {
			t.Error("Add wrote into the client's own slice")
		}
		for _, name := range []string{"docs__search_docs", "docs__other"} {
			err := o.Add(&llm.Request{Tools: []llm.Tool{{Name: "a"}, {Name: name}}}, "chat")
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != llm.Invalid || le.Param != "tools" || !strings.Contains(le.Message, "tools[1]") {
				t.Errorf("a client tool %q: %v, want an invalid tools[1]", name, err)
			}
		}
	})
}

// TestMenuFor: an alias offers its tools; one that offers none, or a menu without a set,
// gives nil, and the request keeps its own tools.
func TestMenuFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(search)
		set := mcpSet(t, srv)
		defer set.Close()
		m := &Menu{Set: set, Offers: map[string][]string{"agent": {"docs"}}}
		req := &llm.Request{}
		if o, err := m.For(t.Context(), "agent", false, req); err != nil || o == nil || len(req.Tools) != 1 {
			t.Fatalf("agent: %v, %v, %d tools", o, err, len(req.Tools))
		}
		plain := &llm.Request{}
		if o, err := m.For(t.Context(), "chat", false, plain); o != nil || err != nil || len(plain.Tools) != 0 {
			t.Errorf("chat: %v, %v, %d tools", o, err, len(plain.Tools))
		}
		if o, _ := (&Menu{}).For(t.Context(), "agent", false, plain); o != nil {
			t.Error("no set, but an offer")
		}
	})
}
