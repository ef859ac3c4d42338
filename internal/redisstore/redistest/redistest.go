// Package redistest runs a real redis-server for tests: started from PATH on a unix socket
// in the test's temporary directory, no TCP port, no persistence but an explicit Stop, and
// stopped at cleanup. Without redis-server the test is skipped, unless the environment sets
// CI: then it fails, so CI cannot pass by skipping. SLUICE_REDIS_SERVER and SLUICE_REDIS_CLI
// name another server and its client (valkey-server, valkey-cli): the same suite then runs
// against it.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process, which Stop and Start can take down and bring back with
// its data. Not safe for concurrent use.
type Server struct {
	Dir, Socket string
	// URL is what redis.url takes: unix://<socket>.
	URL string
	cmd *exec.Cmd
	bin string
}

// ServerBin is the server the harness starts: SLUICE_REDIS_SERVER, or redis-server.
func ServerBin() string { return envOr("SLUICE_REDIS_SERVER", "redis-server") }

// CLIBin is the client that creates and reshards a cluster: SLUICE_REDIS_CLI, or redis-cli.
func CLIBin() string { return envOr("SLUICE_REDIS_CLI", "redis-cli") }

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Binary is the path of ServerBin. Without one the test is skipped, or fails under CI
// (CI must install it).
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath(ServerBin())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (CI must install it): %v", ServerBin(), err)
		}
		t.Skipf("%s is not installed: %v", ServerBin(), err)
	}
	return bin
}

// Start starts redis-server and waits until it answers.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	if len(dir) > 80 {
		// A unix socket path is limited to ~104 bytes; a long test name makes a long TempDir.
		var err error
		if dir, err = os.MkdirTemp("", "redis"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "redis.sock"), bin: bin}
	s.URL = "unix://" + s.Socket
	t.Cleanup(s.kill)
	s.Start(t)
	return s
}

// Start starts the server again after Stop, with the data Stop saved.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "--port", "0", "--unixsocket", s.Socket, "--unixsocketperm", "700",
		"--dir", s.Dir, "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	logf, err := os.OpenFile(filepath.Join(s.Dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() // the child has its own descriptor
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if reply, err := s.Do("PING"); err == nil && reply == "+PONG" {
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			t.Fatalf("redis-server did not answer on %s within 10s; its log:\n%s", s.Socket, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop shuts the server down, saving its data for the next Start.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	_, _ = s.Do("SHUTDOWN", "SAVE") // the connection closes without a reply
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("redis-server did not stop within 10s")
	}
	s.cmd = nil
}

// Pause stops the server with SIGSTOP: its connections stay open and nothing answers, as a
// hung Redis does. Resume undoes it; cleanup kills a paused server too.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP: %v", err)
	}
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT: %v", err)
	}
}

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Do sends one command and returns the first line of the reply ("+OK", ":1", "$5"): enough
// for the harness, which must not depend on the client under test.
func (s *Server) Do(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", s.Socket)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// Dump returns every key in Redis with its value, as text ("key = value"), to check what is
// stored (a key never in clear).
func (s *Server) Dump(t testing.TB) []string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Socket, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	out, err := dump(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dump is Dump on the node of c.
func dump(c *redis.Client) ([]string, error) {
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		return nil, fmt.Errorf("KEYS: %w", err)
	}
	var out []string
	for _, k := range keys {
		var v any
		switch typ := c.Type(ctx, k).Val(); typ {
		case "string":
			v = c.Get(ctx, k).Val()
		case "hash":
			v = c.HGetAll(ctx, k).Val()
		case "zset":
			v = c.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "stream":
			v = c.XRange(ctx, k, "-", "+").Val()
		default:
			return nil, fmt.Errorf("key %s has type %s, which Dump does not read", k, typ)
		}
		out = append(out, fmt.Sprintf("%s = %v", k, v))
	}
	return out, nil
}
