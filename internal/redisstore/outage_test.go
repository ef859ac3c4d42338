package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// store is a replica with the options o, on srv.
func store(t *testing.T, srv backend, o redisstore.Options, log *syncBuffer) *redisstore.Store {
	t.Helper()
	configure(srv, &o)
	if log != nil {
		o.Log = slog.New(slog.NewTextHandler(log, nil))
	}
	s, err := redisstore.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// drained waits until the breaker closed and the spool is written: the probe runs once a
// second, so this is the time Redis takes to come back plus about a second.
func drained(t *testing.T, s *redisstore.Store) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); s.Spooled() > 0 || s.Ping(context.Background()) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records still spooled 20s after Redis came back, want none", s.Spooled())
		}
	}
}

// rows reads the account of day, by key.
func rows(t *testing.T, u usage.Store, day string) map[string]usage.Counts {
	t.Helper()
	out := map[string]usage.Counts{}
	err := u.Rows(context.Background(), []string{day}, func(_ string, r usage.Row) {
		c := out[r.Key]
		c.Add(r.Counts)
		out[r.Key] = c
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var droppedLine = regexp.MustCompile(`usage records dropped: (\d+)`)

// While Redis is down, records wait in the spool up to its bound; the rest are dropped,
// counted and logged; once Redis is back the spool is written, each record once.
func TestSpoolOverflowAndFlush(t *testing.T) {
	srv := redistest.Start(t)
	var log syncBuffer
	s := store(t, srv, redisstore.Options{FailOpen: true, Timeout: 5 * time.Second, Spool: 3}, &log)
	u := s.Usage()
	ctx := context.Background()
	srv.Stop(t)
	for i := range 5 {
		err := u.Add(ctx, "2026-06-01", usage.Labels{Key: fmt.Sprint("k", i)}, usage.Counts{Requests: 1, InputTokens: int64(i)})
		if (err == nil) != (i < 3) {
			t.Errorf("record %d: got %v, want it spooled (nil) for the first 3, an error after", i, err)
		}
	}
	if s.Spooled() != 3 || s.Dropped() != 2 {
		t.Errorf("got %d spooled and %d dropped, want 3 and 2", s.Spooled(), s.Dropped())
	}
	srv.Start(t)
	drained(t, s)
	got := rows(t, u, "2026-06-01")
	want := map[string]usage.Counts{"k0": {Requests: 1}, "k1": {Requests: 1, InputTokens: 1}, "k2": {Requests: 1, InputTokens: 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got the account %v, want %v: the 3 spooled records once each", got, want)
	}
	var n int
	for _, m := range droppedLine.FindAllStringSubmatch(log.String(), -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	if n != 2 {
		t.Errorf("got %d records said dropped in the log, want 2:\n%s", n, log.String())
	}
}

// A write that timed out on a hung Redis lands when Redis wakes up, and the spool writes it
// again: its id makes the second write count nothing.
func TestSpoolExactlyOnceAfterTimeoutThatLanded(t *testing.T) {
	srv := redistest.Start(t)
	s := store(t, srv, redisstore.Options{FailOpen: true, Timeout: time.Second}, nil)
	u := s.Usage()
	ctx := context.Background()
	one := usage.Counts{Requests: 1, OutputTokens: 7, CostNano: 11}
	if err := u.Add(ctx, "2026-06-01", usage.Labels{Key: "k"}, one); err != nil { // loads the script
		t.Fatal(err)
	}
	srv.Pause(t)
	if err := u.Add(ctx, "2026-06-01", usage.Labels{Key: "k"}, one); err != nil {
		t.Fatalf("got %v, want the record spooled", err)
	}
	if s.Spooled() != 1 || s.Waited() != 1 || s.Retries() != 0 {
		t.Fatalf("got %d spooled, %d calls that waited and %d run again, want 1, 1 and 0 (a hung Redis costs one timeout)",
			s.Spooled(), s.Waited(), s.Retries())
	}
	srv.Resume(t)
	drained(t, s)
	if got := rows(t, u, "2026-06-01")["k"]; got != (usage.Counts{Requests: 2, OutputTokens: 14, CostNano: 22}) {
		t.Errorf("got %+v, want 2 requests, 14 tokens, 22 nano-USD: the record that landed counted once", got)
	}
	// The write that timed out did land: Redis ran the script three times (or more, with
	// go-redis's retry), and only two counted.
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	info := c.Info(ctx, "commandstats").Val()
	m := regexp.MustCompile(`cmdstat_evalsha:calls=(\d+)`).FindStringSubmatch(info)
	if len(m) < 2 {
		t.Fatalf("got %q, want EVALSHA calls counted", info)
	}
	if n, _ := strconv.Atoi(m[1]); n < 3 {
		t.Errorf("got %q, want 3 EVALSHA calls at least (the write that timed out landed)", info)
	}
}

// A budget's spend made while Redis is down reaches it once it is back, each reservation
// once: one reserved in Redis and settled during the outage, one reserved locally.
func TestBudgetSpendSpooled(t *testing.T) {
	srv := redistest.Start(t)
	s := store(t, srv, redisstore.Options{FailOpen: true, Timeout: 5 * time.Second}, nil)
	b := s.Budgets()
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	before := usage.NewReservation("k", usage.Budget{Daily: 1000}, 50, now)
	if v, err := b.Reserve(ctx, before); err != nil || !v.OK {
		t.Fatalf("got %+v %v, want ok", v, err)
	}
	srv.Stop(t)
	during := usage.NewReservation("k", usage.Budget{Daily: 1000}, 50, now)
	if v, err := b.Reserve(ctx, during); err != nil || !v.OK {
		t.Fatalf("during: got %+v %v, want ok from the local budget", v, err)
	}
	for _, r := range []usage.Reservation{before, during} {
		if err := b.Settle(ctx, r, 30); err != nil {
			t.Errorf("got %v, want the settle spooled", err)
		}
		if err := b.Settle(ctx, r, 30); err != nil { // a settle written twice counts once
			t.Errorf("got %v, want the settle spooled", err)
		}
	}
	srv.Start(t)
	drained(t, s)
	dump := strings.Join(srv.Dump(t), "\n")
	if !strings.Contains(dump, "sluice:{budget:k}:day:2026-06-01 = 60") || !strings.Contains(dump, "sluice:{budget:k}:month:2026-06 = 60") {
		t.Errorf("got Redis:\n%s\nwant 60 spent on the day and the month (two calls of 30)", dump)
	}
}

// With Redis stopped (SIGSTOP), one call waits for the timeout and opens the breaker; every
// later one fails at once until Redis is back, and the policy decides: open answers from
// local limits, closed refuses. After SIGCONT, a probe closes the breaker.
func TestBreakerHungRedis(t *testing.T) {
	srv := redistest.Start(t)
	var log syncBuffer
	open := store(t, srv, redisstore.Options{FailOpen: true, Timeout: time.Second}, &log)
	closed := store(t, srv, redisstore.Options{Timeout: time.Second}, nil)
	ctx := context.Background()
	ask := func(i int) limit.Ask {
		return limit.Ask{Key: "k", ID: fmt.Sprint(i), Requests: limit.Rule{Limit: 100, Window: time.Hour}}
	}
	for _, st := range []*redisstore.Store{open, closed} {
		if _, err := st.Limiter().Reserve(ctx, ask(0)); err != nil {
			t.Fatal(err)
		}
	}
	srv.Pause(t)
	ol, cl := open.Limiter(), closed.Limiter()
	for i := range 20 {
		if r, err := ol.Reserve(ctx, ask(i+1)); err != nil || !r.OK {
			t.Errorf("open, ask %d: got %+v %v, want ok from the local limits", i, r, err)
		}
		if _, err := cl.Reserve(ctx, ask(i+1)); !errors.Is(err, redisstore.ErrUnavailable) {
			t.Errorf("closed, ask %d: got %v, want ErrUnavailable", i, err)
		}
	}
	for name, st := range map[string]*redisstore.Store{"open": open, "closed": closed} {
		if st.Waited() != 1 || st.Failures() != 20 {
			t.Errorf("%s: got %d calls that waited for the timeout and %d failures, want 1 and 20", name, st.Waited(), st.Failures())
		}
	}
	srv.Resume(t)
	for _, st := range []*redisstore.Store{open, closed} {
		drained(t, st)
	}
	if _, err := cl.Reserve(ctx, ask(99)); err != nil {
		t.Errorf("closed, after SIGCONT: got %v, want Redis answering again", err)
	}
	if !strings.Contains(log.String(), `msg="redis is back"`) {
		t.Errorf("got the log:\n%s\nwant a line saying Redis is back", log.String())
	}
}
