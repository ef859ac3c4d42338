package tools

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

func TestMCPPasses(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allow, deny []string
		pass        []string
		fail        []string
	}{
		{"no filter", nil, nil, []string{"echo", "get-env", "a/b"}, nil},
		{"allow names", []string{"echo", "get-sum"}, nil, []string{"echo", "get-sum"}, []string{"get-env", "echo2", "Echo"}},
		{"deny", nil, []string{"get-env"}, []string{"echo", "get-env2"}, []string{"get-env"}},
		{"globs", []string{"get-*", "read_?"}, []string{"*env*"}, []string{"get-sum", "read_x"}, []string{"get-env", "read_xy", "echo"}},
		{"star matches no slash", []string{"*"}, nil, []string{"x"}, []string{"fs/read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &MCP{Allow: tc.allow, Deny: tc.deny}
			for _, n := range tc.pass {
				if !m.Passes(n) {
					t.Errorf("%s: got filtered out, want offered", n)
				}
			}
			for _, n := range tc.fail {
				if m.Passes(n) {
					t.Errorf("%s: got offered, want filtered out", n)
				}
			}
		})
	}
}

// ran answers its own name.
func ran(name string) mcptest.Tool {
	return mcptest.Tool{Name: name, Run: func(context.Context, json.RawMessage, func(float64, float64, string)) (string, bool) {
		return name + " ran", false
	}}
}

// The model is offered only the tools the filter passes, and a call of any other name of the
// server is refused without reaching it.
func TestMCPFilter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcptest.New(ran("echo"), ran("get-sum"), ran("get-env"), ran("print-env"))
		set := New([]Spec{{Name: "ev", MCP: &MCP{URL: "http://mcp.test/mcp", Timeout: time.Minute, Liveness: 10 * time.Second,
			Allow: []string{"echo", "get-*"}, Deny: []string{"get-env"}}}}, Options{Client: serve(t, srv)})
		defer set.Close()
		o := set.Offer(t.Context(), []string{"ev"}, false)
		var names []string
		for _, d := range o.Tools() {
			names = append(names, d.Name)
		}
		if strings.Join(names, ",") != "ev__echo,ev__get-sum" {
			t.Fatalf("got %v, want ev__echo and ev__get-sum", names)
		}
		if !o.Owns("ev__get-env") || !o.Owns("ev__nope") || o.Owns("other__echo") {
			t.Error("want every ev__ name owned (refused by the gateway), and no other")
		}
		f, msgs, err := runCallsOn(t.Context(), o, toolCall("c1", "ev__get-env", `{}`), toolCall("c2", "ev__print-env", `{}`),
			toolCall("c3", "ev__echo", `{}`))
		if err != nil {
			t.Fatal(err)
		}
		errs := f.of("tool-output-error")
		if len(errs) != 2 || errs[0]["toolCallId"] != "c1" || !strings.Contains(errs[0]["errorText"].(string), "not offered") ||
			!strings.HasPrefix(text(msgs[0]), "Error: The tool ev__get-env is not offered") {
			t.Errorf("got %v and %q, want the refusals", errs, text(msgs[0]))
		}
		if text(msgs[2]) != "echo ran" {
			t.Errorf("got %q, want the allowed tool's result", text(msgs[2]))
		}
		if srv.Runs("get-env") != 0 || srv.Runs("print-env") != 0 || srv.Runs("echo") != 1 {
			t.Errorf("got runs get-env %d, print-env %d, echo %d; want 0, 0, 1", srv.Runs("get-env"), srv.Runs("print-env"), srv.Runs("echo"))
		}
	})
}

// A local server (stdio): this test binary, started by the set, its tools filtered.
func TestMCPStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	set := New([]Spec{{Name: "local", MCP: &MCP{Command: exe, Env: map[string]string{mcptest.StdioEnv: "1", "GORACE": "atexit_sleep_ms=0"},
		Timeout: time.Minute, Liveness: 10 * time.Second, Allow: []string{"calls"}}}}, Options{})
	defer set.Close()
	o := set.Offer(t.Context(), []string{"local"}, false)
	if defs := o.Tools(); len(defs) != 1 || defs[0].Name != "local__calls" {
		t.Fatalf("got %+v, want local__calls only", defs)
	}
	f, msgs, err := runCallsOn(t.Context(), o, toolCall("c1", "local__calls", `{}`), toolCall("c2", "local__pid", `{}`))
	if err != nil || text(msgs[0]) != "1" || len(f.of("data-tool-progress")) != 1 || !strings.HasPrefix(text(msgs[1]), "Error: ") {
		t.Errorf("got %v, %+v (%s); want the call's progress and result, and the filtered one refused", err, msgs, f.types())
	}
}
