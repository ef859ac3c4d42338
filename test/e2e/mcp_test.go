package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

// uiChunks posts a UI chat to the gateway and returns its chunks, to [DONE].
func uiChunks(t *testing.T, url, chat, model string) []map[string]any {
	t.Helper()
	body := `{"id":"` + chat + `","model":"` + model + `","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Add 2 and 3."}]}]}`
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/ui/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got status %d", resp.StatusCode)
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, c)
	}
	return out
}

func ofType(chunks []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, c := range chunks {
		if c["type"] == typ {
			out = append(out, c)
		}
	}
	return out
}

// everything is node and the entry point of the pinned server-everything.
func everything(t *testing.T) (bin, script string) {
	t.Helper()
	bin = node(t)
	script, err := filepath.Abs(filepath.Join("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	return bin, script
}

// serveYAML serves the gateway yaml describes, ${VAR} from vars, until the test ends.
func serveYAML(t *testing.T, yaml string, vars map[string]string, log *slog.Logger) string {
	t.Helper()
	cfg, err := config.ParseWith([]byte(yaml), "e2e.yaml", func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv)
	t.Cleanup(func() {
		gw.CloseClientConnections() // an event stream a failed client left open
		gw.Close()
		srv.Close()
	})
	return gw.URL
}

// sum runs the alias ev-sum (the mock calls everything__get-sum with 2 and 3, then echoes the
// result) and checks the tool's result and the answer that echoes it.
func sum(t *testing.T, url, chat string) {
	t.Helper()
	chunks := uiChunks(t, url, chat, "ev-sum")
	out := ofType(chunks, "tool-output-available")
	if len(out) != 1 || out[0]["output"] != "The sum of 2 and 3 is 5." {
		t.Fatalf("got %v, want get-sum's result; chunks %v", out, chunks)
	}
	if text := strings.Join(textsOf(chunks), ""); !strings.Contains(text, "The sum of 2 and 3 is 5.") {
		t.Errorf("got text %q, want the next round to echo the tool's result", text)
	}
}

// TestMCPServerEverything runs the reference MCP server, @modelcontextprotocol/server-everything
// (pinned in package.json), as a local server of the gateway over stdio, with a filter: the
// model is offered only the tools it passes, a call of a filtered one is refused, a call of an
// allowed one runs and its result feeds the next round; after the server's process is killed,
// the gateway starts it again and the tools work again.
func TestMCPServerEverything(t *testing.T) {
	bin, script := everything(t)
	// The mock upstream, behind a recorder of the tools each request offers the model.
	upstream := mockllm.New(mockllm.Options{})
	offers := make(chan []string, 16)
	mock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(b, &req)
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		select {
		case offers <- names:
		default:
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(mock.Close) // after the gateway's (cleanups run last first)
	logs := make(mcptest.Records, 256)
	url := serveYAML(t, `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  ev-sum: {targets: ['mock/tools?name=everything__get-sum&args={"a":2,"b":3}&then=echo'], tools: [everything]}
  ev-env: {targets: ['mock/tools?name=everything__get-env&args={}&then=echo'], tools: [everything]}
tools:
  everything:
    mcp:
      command: "${NODE}"
      args: ["${SCRIPT}", stdio]
      cwd: "${CWD}"
      timeout: 30s
      tools: {allow: [echo, "get-*"], deny: [get-env]}
`, map[string]string{"MOCK_URL": mock.URL, "NODE": bin, "SCRIPT": script, "CWD": t.TempDir()}, slog.New(logs))
	started := logs.Next(t, "mcp: the server's process started")

	sum(t, url, "ev-sum-1")
	// What the model was offered: what the filter passes, as everything__<tool>, in the
	// server's order (server-everything 2026.8.31's list).
	want := []string{"everything__echo", "everything__get-annotated-message", "everything__get-resource-links",
		"everything__get-resource-reference", "everything__get-structured-content", "everything__get-sum", "everything__get-tiny-image"}
	if got := <-offers; !slices.Equal(got, want) {
		t.Errorf("got the model offered %v, want %v", got, want)
	}

	// A tool the filter denies is not offered, and its call is refused by the gateway.
	chunks := uiChunks(t, url, "ev-env", "ev-env")
	errs := ofType(chunks, "tool-output-error")
	if len(errs) != 1 || !strings.Contains(errs[0]["errorText"].(string), "not offered") || len(ofType(chunks, "tool-output-available")) != 0 {
		t.Errorf("got %v, want get-env refused", ofType(chunks, "tool-output-error"))
	}
	if strings.Contains(strings.Join(textsOf(chunks), ""), "PATH") {
		t.Error("the environment reached the client")
	}

	// The process is killed: the gateway starts it again, and the tools work again.
	pid, _ := strconv.Atoi(started["pid"])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	again := logs.Next(t, "mcp: the server's process started")
	if again["pid"] == started["pid"] {
		t.Fatalf("got the same pid %s, want a new process", again["pid"])
	}
	sum(t, url, "ev-sum-2")
}

// everythingHTTP runs server-everything's Streamable HTTP transport on a free loopback port
// and returns once it listens; stop kills it (SIGKILL: a crash, its sessions lost).
func everythingHTTP(t *testing.T, bin, script, port string) (stop func()) {
	t.Helper()
	loopback, _ := filepath.Abs("loopback.mjs")
	cmd := exec.Command(bin, "--import", loopback, script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port, "NODE_NO_WARNINGS=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port "+port) {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-done:
		t.Fatal("server-everything exited before it listened")
	case <-time.After(time.Minute):
		t.Fatal("server-everything did not listen within a minute")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-done
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestMCPServerEverythingHTTPRestart: server-everything over Streamable HTTP restarts (its
// sessions are lost; it answers the gateway's session with 400 "Bad Request: No valid session
// ID provided"): the gateway starts a new session and its tools work on, with no restart of
// its own.
func TestMCPServerEverythingHTTPRestart(t *testing.T) {
	bin, script := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	stop := everythingHTTP(t, bin, script, port)
	mock := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(mock.Close) // after the gateway's (cleanups run last first)
	url := serveYAML(t, `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  ev-sum: {targets: ['mock/tools?name=everything__get-sum&args={"a":2,"b":3}&then=echo'], tools: [everything]}
tools:
  everything: {mcp: {url: "${MCP_URL}", timeout: 30s, tools: {allow: [get-sum]}}}
`, map[string]string{"MOCK_URL": mock.URL, "MCP_URL": "http://127.0.0.1:" + port + "/mcp"}, slog.New(slog.DiscardHandler))
	sum(t, url, "ev-http-1")
	stop()
	everythingHTTP(t, bin, script, port)
	sum(t, url, "ev-http-2")
}

func textsOf(chunks []map[string]any) []string {
	var out []string
	for _, c := range ofType(chunks, "text-delta") {
		out = append(out, c["delta"].(string))
	}
	return out
}
