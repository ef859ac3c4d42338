package mcp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

// stdioClient starts this test binary as a local server (mcptest.Main, in TestMain).
func stdioClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Command = exe
	if cfg.Env == nil {
		cfg.Env = map[string]string{}
	}
	cfg.Env[mcptest.StdioEnv] = "1"
	cfg.Env["GORACE"] = "atexit_sleep_ms=0" // the race detector's exit waits a second otherwise
	c := New(cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *Client, name, args string) (string, []float64, error) {
	t.Helper()
	k, err := c.Call(t.Context(), name, json.RawMessage(args), nil)
	if err != nil {
		return "", nil, err
	}
	ps, text, err := events(t, k)
	return text, ps, err
}

func TestStdioSessionAndCall(t *testing.T) {
	c := stdioClient(t, Config{})
	tools, err := c.Tools(t.Context())
	if err != nil || len(tools) != len(mcptest.Child()) || tools[0].Name != "calls" {
		t.Fatalf("got %+v, %v; want the child's tools", tools, err)
	}
	k, err := c.Call(t.Context(), "calls", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ps, text, err := events(t, k)
	if err != nil || text != "1" || len(ps) != 1 || !k.Streaming() {
		t.Errorf("got progress %v, result %q, %v; want one report, then 1, streamed", ps, text, err)
	}
	if c.Changed() {
		t.Error("the list is stale after it was read")
	}
}

// The process gets a minimal environment and its own variables, never the gateway's.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("SLUICE_TEST_PROVIDER_KEY", "sk-test-gateway-secret")
	c := stdioClient(t, Config{Env: map[string]string{"GIVEN": "yes"}})
	for name, want := range map[string]string{"SLUICE_TEST_PROVIDER_KEY": "<unset>", "GIVEN": "yes", "PATH": os.Getenv("PATH")} {
		if got, _, err := call(t, c, "env", `{"name":"`+name+`"}`); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
}

// The process's stderr is logged at debug, a line a record.
func TestStdioStderr(t *testing.T) {
	l := make(mcptest.Records, 64)
	c := stdioClient(t, Config{Log: slog.New(l)})
	if got, _, err := call(t, c, "stderr", `{"text":"warming the cache"}`); err != nil || got != "ok" {
		t.Fatalf("got %q, %v", got, err)
	}
	m := l.Next(t, "mcp: the server's stderr")
	if m["line"] != "warming the cache" || m["level"] != "DEBUG" {
		t.Errorf("got %v, want the line at debug", m)
	}
}

// A process that dies is started again (and the client told, to list the tools again); a
// call in flight when it died fails and is not sent again; the tools work again, in a new
// session of the new process.
func TestStdioRestart(t *testing.T) {
	restarted := make(chan struct{}, 1)
	c := stdioClient(t, Config{Changed: func() {
		select {
		case restarted <- struct{}{}:
		default:
		}
	}})
	pid, _, err := call(t, c, "pid", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(pid)
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, restarted)
	if !c.Changed() {
		t.Error("the list is not stale after the restart")
	}
	again, _, err := call(t, c, "pid", `{}`)
	if err != nil || again == pid || again == "" {
		t.Fatalf("got pid %q, %v after the kill of %s; want another process's", again, err, pid)
	}

	// A call cut by the process's end: its progress, then an error, and no second run.
	_, ps, err := call(t, c, "exit", `{}`)
	if err == nil || !strings.Contains(err.Error(), "process ended before its answer") || len(ps) != 1 {
		t.Fatalf("got progress %v, %v; want the report, then the process's end", ps, err)
	}
	waitFor(t, restarted)
	if got, _, err := call(t, c, "calls", `{}`); err != nil || got != "1" {
		t.Errorf("got %q, %v; want the first call of a new process", got, err)
	}
}

// waitFor waits for a signal on ch, and fails the test after a minute.
func waitFor(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("no restart within a minute")
	}
}

// Close stops the process; one that stays when its stdin closes gets SIGTERM.
func TestStdioClose(t *testing.T) {
	for _, stubborn := range []bool{false, true} {
		t.Run("stubborn="+strconv.FormatBool(stubborn), func(t *testing.T) {
			env := map[string]string{}
			if stubborn {
				env[mcptest.StubbornEnv] = "1"
			}
			c := stdioClient(t, Config{Env: env})
			pid, _, err := call(t, c, "pid", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			n, _ := strconv.Atoi(pid)
			if err := syscall.Kill(n, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("got %v signaling the process after Close, want it gone", err)
			}
			if _, err := c.Tools(t.Context()); err == nil {
				t.Error("got no error from a closed client")
			}
		})
	}
}

// A command that cannot start is an error to every use (and logged), and Close does not wait
// for the next attempt.
func TestStdioNoCommand(t *testing.T) {
	l := make(mcptest.Records, 64)
	c := New(Config{Command: "/nonexistent/mcp-server", Log: slog.New(l), Backoff: time.Hour})
	defer c.Close()
	m := l.Next(t, "mcp: the server's process ended; starting it again")
	if !strings.Contains(m["err"], "no such file") {
		t.Errorf("got %v, want the start's error", m)
	}
	if _, err := c.Tools(t.Context()); !errors.Is(err, errNotRunning) {
		t.Errorf("got %v, want %v", err, errNotRunning)
	}
}
