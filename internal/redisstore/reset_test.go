package redisstore_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// resetter is a TCP proxy on loopback to a Redis on its unix socket that, while armed, passes
// a command to Redis and then resets the client's connection (RST) in place of Redis's
// answer: the command ran, and its answer is lost with the connection, as when a connection
// is reset during a cluster's resharding (issue 34). Close stops it and waits.
type resetter struct {
	ln     net.Listener
	socket string
	armed  atomic.Int32 // answers still to drop
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newResetter(t *testing.T, srv *redistest.Server) *resetter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &resetter{ln: ln, socket: srv.Socket}
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	return p
}

func (p *resetter) url() string { return "redis://" + p.ln.Addr().String() }

func (p *resetter) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("unix", p.socket)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(up, c); up.Close() })
		p.wg.Go(func() { p.answers(c.(*net.TCPConn), up) })
	}
}

// answers passes Redis's answers to the client, but for an armed one: that resets both.
func (p *resetter) answers(c *net.TCPConn, up net.Conn) {
	defer up.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 && p.armed.Add(-1) >= 0 {
			_ = c.SetLinger(0) // Close sends RST: the client's read fails with ECONNRESET
			c.Close()
			return
		}
		p.armed.Store(0)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				c.Close()
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

func (p *resetter) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// A call that is safe to run twice and whose answer is lost with a reset connection runs once
// more, at once, and counts once: the reservation, the budget and the usage record all ran in
// Redis before the reset, and the breaker does not trip (issue 34: a lone reset during a
// resharding refused a second of requests under on_failure: closed).
func TestResetRunsAgainOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	budget := usage.NewReservation("k", usage.Budget{Daily: 50}, 50, now)
	for _, c := range []struct {
		name string
		call func(s *redisstore.Store) error
		want [][3]string // command, key, the first line of Redis's answer
	}{
		{"requests reserved", func(s *redisstore.Store) error {
			r, err := s.Limiter().Reserve(ctx, limit.Ask{Key: "k", ID: "a1", Requests: limit.Rule{Limit: 1, Window: time.Hour}})
			if err == nil && (!r.OK || r.Requests.Remaining != 0) {
				err = errors.New("refused, or not counted: " + r.RetryAfter.String())
			}
			return err
		}, [][3]string{{"ZCARD", "sluice:{key:k}:rpm", ":1"}}},
		{"tokens reserved", func(s *redisstore.Store) error {
			r, err := s.Limiter().Reserve(ctx, limit.Ask{Key: "k", ID: "a1", Cost: 60, Tokens: limit.Rule{Limit: 100, Window: time.Hour}})
			if err == nil && (!r.OK || r.Tokens.Remaining != 40) {
				err = errors.New("refused, or counted twice")
			}
			return err
		}, [][3]string{{"ZCARD", "sluice:{key:k}:tpm", ":1"}, {"INCRBY", "sluice:{key:k}:tpm:sum", ":60"}}},
		{"budget reserved", func(s *redisstore.Store) error {
			v, err := s.Budgets().Reserve(ctx, budget)
			if err == nil && !v.OK {
				err = errors.New("refused at its own reservation")
			}
			return err
		}, [][3]string{{"INCRBY", "sluice:{budget:k}:day:" + budget.Day, ":50"}}},
		{"usage record", func(s *redisstore.Store) error {
			return s.Usage().Add(ctx, "2026-06-01", usage.Labels{Key: "k"}, usage.Counts{Requests: 1})
		}, [][3]string{{"HGET", "sluice:{usage:2026-06-01}", "k\x1f\x1f\x1frequests"}}},
		{"key looked up", func(s *redisstore.Store) error {
			_, err := s.Keys().Lookup(ctx, "nohash")
			if errors.Is(err, auth.ErrNotFound) {
				err = nil
			}
			return err
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Start(t)
			p := newResetter(t, srv)
			s := store(t, nil, redisstore.Options{URL: p.url(), Timeout: 5 * time.Second}, nil)
			if err := s.Ping(ctx); err != nil { // a connection in the pool
				t.Fatal(err)
			}
			p.armed.Store(2)
			if err := c.call(s); err != nil {
				t.Fatalf("got %v, want the call run again and answered", err)
			}
			if s.Retries() != 1 || s.Failures() != 0 || s.Spooled() != 0 {
				t.Errorf("got %d retries, %d failures, %d spooled; want 1 retry, no failure (the breaker closed), nothing spooled",
					s.Retries(), s.Failures(), s.Spooled())
			}
			for _, w := range c.want {
				args := []string{w[0], w[1]}
				switch w[0] {
				case "INCRBY": // INCRBY 0: the counter as an integer, unchanged
					args = append(args, "0")
				case "HGET": // the row's requests: HGET's first line is the length, so HINCRBY 0
					args = []string{"HINCRBY", w[1], w[2], "0"}
					w[2] = ":1"
				}
				if got, err := srv.Do(args...); err != nil || got != w[2] {
					t.Errorf("%v: got %q %v, want %q: the call counted once", args, got, err, w[2])
				}
			}
		})
	}
}

// A call that is not safe to run twice (a key created: run again it would find itself and
// answer "exists") is not run again: a reset is a failure, as before.
func TestResetOnceOnlyForSafeCalls(t *testing.T) {
	srv := redistest.Start(t)
	p := newResetter(t, srv)
	s := store(t, nil, redisstore.Options{URL: p.url(), Timeout: 5 * time.Second}, nil)
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	p.armed.Store(2)
	err := s.Keys().Create(ctx, &auth.Key{ID: "k1", Hash: "h1", Name: "one"})
	if !errors.Is(err, redisstore.ErrUnavailable) || s.Retries() != 0 {
		t.Errorf("got %v after %d retries, want ErrUnavailable and none", err, s.Retries())
	}
}
