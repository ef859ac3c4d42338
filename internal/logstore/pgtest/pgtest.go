// Package pgtest runs a real PostgreSQL for tests: a cluster made with initdb in a temporary
// folder, started with pg_ctl, listening on a unix socket only (no TCP port), stopped and
// removed at cleanup. PostgreSQL refuses to run as root, so when the tests run as root the
// cluster runs as the user nobody. Without PostgreSQL the test is skipped, unless the
// environment sets CI: then it fails, so CI cannot pass by skipping.
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Server is one PostgreSQL cluster, which Stop and Start can take down and bring back with
// its data. Not safe for concurrent use.
type Server struct {
	// Dir holds the cluster (data/), its socket (the folder itself) and its log (pg.log).
	Dir string
	// URL is what logstore.Open takes: the database "sluice" over the unix socket.
	URL string

	bin     string
	cred    *syscall.Credential // the user the cluster runs as, nil for the test's own
	running bool
}

// Bin is the folder of initdb, pg_ctl and postgres. Without one the test is skipped, or
// fails under CI (CI must install Debian's postgresql).
func Bin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real // a link in PATH to Debian's folder, which has the other programs
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
			return filepath.Dir(p)
		}
	}
	// Debian keeps them out of PATH, one folder per major version: take the newest.
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("PostgreSQL is not installed (CI must install Debian's postgresql: initdb, pg_ctl)")
	}
	t.Skip("PostgreSQL is not installed (initdb, pg_ctl)")
	return ""
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

var seq atomic.Int64

// Start makes a cluster, starts it, creates the database "sluice" and stops the cluster at
// the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Bin(t)
	// A unix socket path is limited to ~104 bytes: the cluster lives in a short folder of
	// its own, not in t.TempDir.
	dir, err := os.MkdirTemp("", "pg")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, bin: bin}
	t.Cleanup(func() {
		s.kill()
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("PostgreSQL refuses root, and there is no user nobody to run it as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil { // the test (root or not) reaches the socket
		t.Fatal(err)
	}
	if out, err := s.run("initdb", "-D", s.data(), "-U", "sluice", "--auth=trust", "--encoding=UTF8",
		"--locale=C", "--no-instructions", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.URL = fmt.Sprintf("postgres://sluice@/sluice?host=%s&sslmode=disable", dir)
	s.Start(t)
	s.CreateDB(t, "sluice")
	return s
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// Start starts the cluster (again, after Stop, with its data) and waits until it answers.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100", s.Dir)
	if out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "pg.log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "pg.log"))
		t.Fatalf("pg_ctl start: %v\n%s\nits log:\n%s", err, out, log)
	}
	s.running = true
	deadline := time.Now().Add(30 * time.Second)
	for !s.ready() {
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL did not answer on %s within 30s", s.Dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ready reports whether the socket takes connections.
func (s *Server) ready() bool {
	c, err := net.DialTimeout("unix", filepath.Join(s.Dir, ".s.PGSQL.5432"), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Stop shuts the cluster down (fast: sessions are ended), keeping its data for Start.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if out, err := s.run("pg_ctl", "-D", s.data(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
	s.running = false
}

// CreateDB creates a database and returns its URL.
func (s *Server) CreateDB(t testing.TB, name string) string {
	t.Helper()
	if out, err := s.run("createdb", "-h", s.Dir, "-U", "sluice", name); err != nil {
		t.Fatalf("createdb %s: %v\n%s", name, err, out)
	}
	return strings.Replace(s.URL, "/sluice?", "/"+name+"?", 1)
}

// NewDB creates a database with a name of its own and returns its URL: a fresh database for
// each part of a test.
func (s *Server) NewDB(t testing.TB) string {
	t.Helper()
	return s.CreateDB(t, fmt.Sprintf("t%d_%d", os.Getpid(), seq.Add(1)))
}

// Dump returns pg_dump's text of database name (data and schema), to check what is stored.
func (s *Server) Dump(t testing.TB, name string) []byte {
	t.Helper()
	out, err := s.run("pg_dump", "-h", s.Dir, "-U", "sluice", name)
	if err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	return out
}

// run runs one of PostgreSQL's programs as the cluster's user and returns its output.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGHOST="+s.Dir)
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		cmd.Env = append(cmd.Env, "HOME="+s.Dir, "USER=nobody")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// kill stops a cluster still running at cleanup, at once.
func (s *Server) kill() {
	if s.running {
		_, _ = s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "-t", "30", "stop")
		s.running = false
	}
}
