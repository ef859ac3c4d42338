package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// toxiproxy is a real Toxiproxy server (Shopify's, v2.5.0, built from the tools/toxiproxy
// module: never in the gateway's go.mod) on a loopback port, driven through its HTTP API.
type toxiproxy struct {
	api string // http://127.0.0.1:port
}

// toxicProxy is one proxy of a toxiproxy: URL is its listener, before the upstream's.
type toxicProxy struct {
	URL  string
	name string
	x    *toxiproxy
}

var (
	toxiproxyOnce sync.Once
	toxiproxyPath string
	toxiproxyErr  error
)

// toxiproxyBin is the toxiproxy-server binary: SLUICE_TOXIPROXY (make test sets it), else
// bin/toxiproxy-server, built there from tools/toxiproxy if missing (make toxiproxy does the
// same). When it cannot be built (no module cache and no network) the test is skipped, and
// fails in CI (.ci/run builds it).
func toxiproxyBin(t *testing.T) string {
	t.Helper()
	toxiproxyOnce.Do(func() {
		toxiproxyPath = os.Getenv("SLUICE_TOXIPROXY")
		if toxiproxyPath == "" {
			toxiproxyPath, _ = filepath.Abs(filepath.Join("..", "..", "bin", "toxiproxy-server"))
		}
		if _, err := os.Stat(toxiproxyPath); err == nil {
			return
		}
		build := exec.Command("go", "build", "-trimpath", "-o", toxiproxyPath, "github.com/Shopify/toxiproxy/v2/cmd/server")
		build.Dir = filepath.Join("..", "..", "tools", "toxiproxy")
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := build.CombinedOutput(); err != nil {
			toxiproxyErr = fmt.Errorf("building toxiproxy-server from tools/toxiproxy: %v\n%s", err, out)
		}
	})
	if toxiproxyErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf(".ci/run builds it (make toxiproxy): %v", toxiproxyErr)
		}
		t.Skipf("no toxiproxy-server (make toxiproxy builds it): %v", toxiproxyErr)
	}
	return toxiproxyPath
}

// startToxiproxy starts a toxiproxy-server on a free loopback port until the test ends.
func startToxiproxy(t *testing.T) *toxiproxy {
	t.Helper()
	bin := toxiproxyBin(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	x := &toxiproxy{api: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, err := http.Get(x.api + "/version")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return x
			}
		}
		select {
		case err := <-done:
			t.Fatalf("toxiproxy-server exited: %v\n%s", err, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy-server did not answer on %s: %v\n%s", x.api, err, logs.String())
		}
	}
}

// call sends a JSON body (nil: none) to the API and fails the test unless it answers want.
func (x *toxiproxy) call(t *testing.T, method, path string, body any, want int) []byte {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, x.api+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("toxiproxy %s %s: status %d, want %d: %s", method, path, res.StatusCode, want, out)
	}
	return out
}

// proxy makes a proxy named name on a free loopback port before the HTTP server at upstream.
func (x *toxiproxy) proxy(t *testing.T, name, upstream string) *toxicProxy {
	t.Helper()
	out := x.call(t, "POST", "/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0",
		"upstream": strings.TrimPrefix(upstream, "http://"), "enabled": true}, http.StatusCreated)
	var p struct {
		Listen string `json:"listen"`
	}
	if err := json.Unmarshal(out, &p); err != nil || p.Listen == "" {
		t.Fatalf("toxiproxy POST /proxies: %v, %s", err, out)
	}
	return &toxicProxy{URL: "http://" + p.Listen, name: name, x: x}
}

// slow puts a latency toxic of d on the answers (downstream), or with 0 deletes it. The
// toxic applies to the connections already open too.
func (p *toxicProxy) slow(t *testing.T, d time.Duration) {
	t.Helper()
	path := "/proxies/" + p.name + "/toxics"
	if d == 0 {
		p.x.call(t, "DELETE", path+"/latency", nil, http.StatusNoContent)
		return
	}
	p.x.call(t, "POST", path, map[string]any{"name": "latency", "type": "latency", "stream": "downstream",
		"toxicity": 1.0, "attributes": map[string]any{"latency": d.Milliseconds()}}, http.StatusOK)
}
