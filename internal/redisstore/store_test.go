package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { stopSharedCluster() }))
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// replica is one gateway's connection to the shared Redis.
func replica(t *testing.T, srv backend, open bool, log *syncBuffer) *redisstore.Store {
	t.Helper()
	return store(t, srv, redisstore.Options{FailOpen: open, Timeout: 5 * time.Second}, log)
}

// Two replicas, 100 concurrent asks against 60 per hour: exactly 60 pass, whichever replica
// they reach (per hour, so no entry leaves the window during the test).
func TestLimiterExactAcrossReplicas(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		limiters := []*redisstore.Limiter{replica(t, srv, false, nil).Limiter(), replica(t, srv, false, nil).Limiter()}
		var ok, refused atomic.Int64
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				r, err := limiters[i%2].Reserve(context.Background(), limit.Ask{Key: "k", ID: fmt.Sprint(i),
					Requests: limit.Rule{Limit: 60, Window: time.Hour}})
				switch {
				case err != nil:
					t.Errorf("ask %d: %v", i, err)
				case r.OK:
					ok.Add(1)
				default:
					refused.Add(1)
					if r.RetryAfter < 59*time.Minute || r.RetryAfter > time.Hour || r.Requests.Remaining != 0 {
						t.Errorf("ask %d: got retry %v remaining %d, want about an hour and 0", i, r.RetryAfter, r.Requests.Remaining)
					}
				}
			})
		}
		wg.Wait()
		if ok.Load() != 60 || refused.Load() != 40 {
			t.Errorf("got %d passed and %d refused, want 60 and 40", ok.Load(), refused.Load())
		}
	})
}

func TestLimiterTokens(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := replica(t, srv, false, nil).Limiter(), replica(t, srv, false, nil).Limiter()
		ctx := context.Background()
		rule := limit.Rule{Limit: 100, Window: time.Minute}
		reserve := func(l *redisstore.Limiter, id string, cost int64) limit.Result {
			t.Helper()
			r, err := l.Reserve(ctx, limit.Ask{Key: "k", ID: id, Tokens: rule, Requests: limit.Rule{Limit: 1000, Window: time.Minute}, Cost: cost})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if r := reserve(a, "a", 50); !r.OK || r.Tokens.Remaining != 50 || r.Tokens.Reset <= 59*time.Second || r.Requests.Remaining != 999 {
			t.Errorf("a: got %+v, want ok, 50 tokens and 999 requests left, reset in about 1m", r)
		}
		if r := reserve(b, "b", 40); !r.OK || r.Tokens.Remaining != 10 {
			t.Errorf("b: got %+v, want ok, 10 left", r)
		}
		if r := reserve(a, "c", 20); r.OK || r.Never || r.RetryAfter < 58*time.Second || r.Requests.Remaining != 998 {
			t.Errorf("c: got %+v, want refused for about a minute, no request taken", r)
		}
		if err := b.Reconcile(ctx, "k", "a", rule, 10); err != nil {
			t.Fatal(err)
		}
		if r := reserve(b, "c", 20); !r.OK || r.Tokens.Remaining != 30 {
			t.Errorf("c after reconcile: got %+v, want ok, 30 left", r)
		}
		if r := reserve(a, "d", 101); r.OK || !r.Never {
			t.Errorf("d: got %+v, want refused for good", r)
		}
		if err := a.Reconcile(ctx, "k", "gone", rule, 5); err != nil {
			t.Errorf("got %v reconciling an unknown reservation, want it ignored", err)
		}
	})
}

func TestHealthShared(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		ctx := context.Background()
		a, b := replica(t, srv, true, nil).Health(), replica(t, srv, true, nil).Health()
		for _, h := range []*redisstore.Health{a, b} {
			h.CacheTTL = 50 * time.Millisecond
		}
		for i := range 3 {
			left := a.Failure(ctx, "p/m", 0)
			if want := i == 2; (left > 0) != want {
				t.Fatalf("failure %d: got cooldown %v, want cooling %v", i+1, left, want)
			}
		}
		if ok, left := b.Admit(ctx, "p/m", false); ok || left < 4*time.Second || left > 5*time.Second {
			t.Errorf("b: got admitted %v with %v left, want the 5s cooldown a started", ok, left)
		}
		if ok, _ := b.Admit(ctx, "p/m", true); !ok {
			t.Errorf("b: got a forced probe refused, want it taken")
		}
		if ok, _ := a.Admit(ctx, "p/m", true); ok {
			t.Errorf("a: got a second probe while b holds one, want refused")
		}
		b.Success(ctx, "p/m")
		time.Sleep(60 * time.Millisecond) // a's cached cooldown expires
		if ok, left := a.Admit(ctx, "p/m", false); !ok || left != 0 {
			t.Errorf("a: got %v %v after b's probe succeeded, want admitted", ok, left)
		}
		if ok, _ := a.Admit(ctx, "other", false); !ok {
			t.Errorf("got an unknown target refused, want admitted")
		}
	})
}

func TestKeys(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		ctx := context.Background()
		a, b := replica(t, srv, false, nil).Keys(), replica(t, srv, false, nil).Keys()
		b.CacheTTL = 50 * time.Millisecond
		secret := auth.NewSecret()
		k := &auth.Key{ID: auth.NewID(), Name: "team", Hash: auth.Hash(secret), Models: []string{"*"}, RPM: 5,
			CreatedAt: time.Now().UTC().Truncate(time.Second), Metadata: map[string]string{"team": "a"}}
		if err := a.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := b.Create(ctx, &auth.Key{ID: "other", Hash: k.Hash}); !errors.Is(err, auth.ErrExists) {
			t.Errorf("got %v creating a taken hash, want ErrExists", err)
		}
		got, err := b.Lookup(ctx, auth.Hash(secret))
		if err != nil || got.ID != k.ID || got.Name != "team" || got.RPM != 5 || got.Metadata["team"] != "a" || !got.CreatedAt.Equal(k.CreatedAt) {
			t.Fatalf("got %+v %v, want the key a created", got, err)
		}
		// Concurrent updates from both replicas: none lost.
		var wg sync.WaitGroup
		for i := range 10 {
			s := []*redisstore.Keys{a, b}[i%2]
			wg.Go(func() {
				if _, err := s.Update(ctx, k.ID, func(k *auth.Key) error { k.TPM++; return nil }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got, _ := a.Get(ctx, k.ID); got.TPM != 10 {
			t.Errorf("got tpm %d after 10 concurrent increments, want 10", got.TPM)
		}
		if err := a.Delete(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond) // b's cache expires
		if _, err := b.Lookup(ctx, k.Hash); !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("got %v on b after a deleted the key, want ErrNotFound", err)
		}
		if _, err := a.Update(ctx, k.ID, func(*auth.Key) error { return nil }); !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("got %v updating a deleted key, want ErrNotFound", err)
		}
		if list, err := a.List(ctx); err != nil || len(list) != 0 {
			t.Errorf("got %d keys %v, want none", len(list), err)
		}
		for _, kv := range srv.Dump(t) {
			if strings.Contains(kv, secret) {
				t.Errorf("Redis holds the key in clear: %s", kv)
			}
		}
	})
}

// Redis stopped: open serves from local limits and logs once; closed refuses; Redis back:
// the shared log holds again, with what it had counted before.
func TestOutage(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	var log syncBuffer
	openStore, closedStore := replica(t, srv, true, &log), replica(t, srv, false, nil)
	open, closed := openStore.Limiter(), closedStore.Limiter()
	rule := limit.Rule{Limit: 5, Window: time.Hour}
	n := 0
	ask := func(l *redisstore.Limiter) (limit.Result, error) {
		n++
		return l.Reserve(ctx, limit.Ask{Key: "k", ID: fmt.Sprint(n), Requests: rule})
	}
	for range 3 {
		if r, err := ask(closed); err != nil || !r.OK {
			t.Fatalf("before the outage: got %+v %v, want ok", r, err)
		}
	}
	srv.Stop(t)
	for i := range 10 {
		r, err := ask(open)
		if want := i < 5; err != nil || r.OK != want {
			t.Errorf("open, outage, ask %d: got %+v %v, want ok %v from the local limit", i, r, err, want)
		}
	}
	if _, err := ask(closed); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("closed, outage: got %v, want ErrUnavailable", err)
	} else if le := (*llm.Error)(nil); !errors.As(err, &le) || le.Kind != llm.Unavailable || le.Code != "redis_unavailable" ||
		strings.Contains(err.Error(), strings.TrimPrefix(srv.URL, "unix://")) {
		// The handlers answer the kind without knowing the store, and the text may reach a
		// client: no address in it.
		t.Errorf("closed, outage: got %#v (%q), want an llm.Unavailable redis_unavailable error with no address", le, err)
	}
	if err := openStore.Ping(ctx); err == nil {
		t.Errorf("got Ping ok during the outage")
	}
	if got := openStore.Failures(); got < 10 {
		t.Errorf("got %d failures counted, want at least 10", got)
	}
	if got := strings.Count(log.String(), "redis unavailable"); got != 1 {
		t.Errorf("got %d log lines about the outage, want 1:\n%s", got, log.String())
	}
	srv.Start(t)
	// Each store's breaker probes once a second: both are back within about one.
	for _, st := range []*redisstore.Store{openStore, closedStore} {
		for deadline := time.Now().Add(5 * time.Second); st.Ping(ctx) != nil; {
			if time.Now().After(deadline) {
				t.Fatal("a store did not reconnect within 5s")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i := range 3 {
		r, err := ask(open)
		if want := i < 2; err != nil || r.OK != want {
			t.Errorf("open, back, ask %d: got %+v %v, want ok %v (3 of 5 were counted before)", i, r, err, want)
		}
	}
	if r, err := ask(closed); err != nil || r.OK {
		t.Errorf("closed, back: got %+v %v, want refused by the shared limit", r, err)
	}
	if !strings.Contains(log.String(), "redis is back") {
		t.Errorf("got no log line about Redis coming back:\n%s", log.String())
	}
}
