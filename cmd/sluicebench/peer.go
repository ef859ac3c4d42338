package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bifrostConfig is the peer's config.json: its openai provider pointed at the mock (base URL
// without /v1: Bifrost appends /v1/chat/completions), any model (an empty list: "*" is not a
// wildcard in 1.4.19), the config store off, and request logging as the gateway's (%t, then
// the logs store's JSON): when SLUICE_BENCH_LOGS turns the gateway's request log on, Bifrost
// logs to its own SQLite store, without content, as users run both (issue 36). Its price
// sheet is fetched from the mock (%q, which answers 404: Bifrost then runs without prices)
// instead of getbifrost.ai, so that nothing leaves the machine.
const bifrostConfig = `{
  "client": {"enable_logging": %t, "disable_content_logging": true},
  "config_store": {"enabled": false},
  "logs_store": %s,
  "framework": {"pricing": {"pricing_url": %q}},
  "providers": {
    "openai": {
      "keys": [{"name": "mock", "value": "sk-mock-upstream", "models": [], "weight": 1}],
      "network_config": {"base_url": %q}
    }
  }
}
`

// peerEnv is where the optional peer comes from: BIFROST_BIN, the built bifrost-http binary,
// and BIFROST_DIR, its app dir (the bench writes config.json there; a fresh temporary
// directory when unset). Bifrost runs in its app dir and validates its config against the
// config.schema.json it finds there (copy it from transports/ of the same checkout), or else
// fetches the schema from getbifrost.ai at start-up.
//
// SLUICE_BENCH_PEER makes the peer a second gateway, this binary, in place of Bifrost: with
// logoff, its request log off (run with SLUICE_BENCH_LOGS, it measures what the log costs
// side by side, in the same rounds: issue 50); with same, the gateway's own settings (an A/A
// run: what the harness alone makes of two equal servers).
type peerEnv struct {
	bin, dir string
	twin     string // "logoff" or "same": the peer is a second gateway; "": Bifrost or none
}

func peerFromEnv(getenv func(string) string) (peerEnv, error) {
	pe := peerEnv{bin: getenv("BIFROST_BIN"), dir: getenv("BIFROST_DIR")}
	switch v := getenv("SLUICE_BENCH_PEER"); {
	case v == "":
	case v != "logoff" && v != "same":
		return pe, fmt.Errorf("SLUICE_BENCH_PEER=%q: want logoff, same or unset", v)
	case pe.bin != "":
		return pe, fmt.Errorf("SLUICE_BENCH_PEER=%s and BIFROST_BIN both name the peer: unset one", v)
	case v == "logoff" && getenv("SLUICE_BENCH_LOGS") == "":
		return pe, errors.New("SLUICE_BENCH_PEER=logoff needs SLUICE_BENCH_LOGS: without it both gateways run with the log off")
	case v == "same" && strings.HasPrefix(getenv("SLUICE_BENCH_LOGS"), "sqlite:"):
		// Two processes on one SQLite file take turns at its write lock: not two equal servers.
		return pe, errors.New("SLUICE_BENCH_PEER=same with a SQLite SLUICE_BENCH_LOGS would have both gateways write one file")
	default:
		pe.twin = v
	}
	return pe, nil
}

// twinEnv is the second gateway's environment from this process's env: without
// SLUICE_BENCH_LOGS for logoff, as it is (nil) for same.
func (pe peerEnv) twinEnv(env []string) []string {
	if pe.twin != "logoff" {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "SLUICE_BENCH_LOGS=") })
}

// spawnBifrost starts Bifrost on a free loopback port in front of the mock at upstream, pinned
// by pn as every server under test, its output appended to bifrost.log in logDir, and waits
// until /health answers.
func spawnBifrost(ctx context.Context, pe peerEnv, upstream, logDir string, pn pinning) (*proc, error) {
	dir := pe.dir
	if dir == "" {
		dir = filepath.Join(logDir, "bifrost-app")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	logs, store := os.Getenv("SLUICE_BENCH_LOGS") != "", `{"enabled": false}`
	if logs {
		store = fmt.Sprintf(`{"enabled": true, "type": "sqlite", "config": {"path": %q}}`, filepath.Join(dir, "logs.db"))
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), fmt.Appendf(nil, bifrostConfig, logs, store, upstream+"/datasheet", upstream), 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, "bifrost.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(pe.bin, "-app-dir", dir, "-host", "127.0.0.1", "-port", strconv.Itoa(port), "-log-level", "error")
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, dir
	if err := pn.start(cmd, true); err != nil {
		return nil, fmt.Errorf("starting BIFROST_BIN: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
			return nil // its exit status after SIGTERM says nothing about the run
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-waited
			return errors.New("bifrost did not stop in 10 s: killed")
		}
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	hc := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-waited:
			waited <- err
			return nil, fmt.Errorf("bifrost exited before answering (%v): see %s", err, logPath)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := hc.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("bifrost did not answer /health within 60 s: see %s", logPath)
		}
	}
	return &proc{name: "bifrost", url: url, model: "openai/", pid: cmd.Process.Pid, stop: stop}, nil
}

// freePort is a loopback port free a moment ago (Bifrost takes a port, not a listener).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
