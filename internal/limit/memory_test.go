package limit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMemoryRequests(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	m := &Memory{Now: func() time.Time { return now }}
	rule := Rule{Limit: 3, Window: time.Minute}
	n := 0
	ask := func() Result {
		n++
		r, err := m.Reserve(ctx, Ask{Key: "k", ID: fmt.Sprint(n), Requests: rule})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	steps := []struct {
		name      string
		advance   time.Duration
		ok        bool
		remaining int64
		retry     time.Duration
	}{
		{"first", 0, true, 2, 0},
		{"second, 50s later", 50 * time.Second, true, 1, 0},
		{"third", 0, true, 0, 0},
		{"fourth refused until the first leaves", 0, false, 0, 10 * time.Second},
		{"just before: still refused", 10*time.Second - time.Millisecond, false, 0, time.Millisecond},
		// A fixed window would have reset at 60s and let 3 more through: the log lets one.
		{"the first left", time.Millisecond, true, 0, 0},
		{"then refused until the second leaves", 0, false, 0, 50 * time.Second},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		r := ask()
		if r.OK != s.ok || r.Requests.Remaining != s.remaining || r.RetryAfter != s.retry {
			t.Errorf("%s: got ok %v remaining %d retry %v, want %v %d %v", s.name, r.OK, r.Requests.Remaining, r.RetryAfter, s.ok, s.remaining, s.retry)
		}
		if r.Requests.Limit != 3 || r.Tokens.Limit != 0 {
			t.Errorf("%s: got limits %d %d, want 3 and none", s.name, r.Requests.Limit, r.Tokens.Limit)
		}
	}
}

func TestMemoryTokens(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	m := &Memory{Now: func() time.Time { return now }}
	rule := Rule{Limit: 100, Window: time.Minute}
	reserve := func(id string, cost int64) Result {
		r, _ := m.Reserve(ctx, Ask{Key: "k", ID: id, Tokens: rule, Cost: cost})
		return r
	}
	if r := reserve("a", 50); !r.OK || r.Tokens.Remaining != 50 || r.Tokens.Reset != time.Minute {
		t.Errorf("a: got %+v, want ok, 50 left, reset in 1m", r)
	}
	now = now.Add(time.Second)
	if r := reserve("b", 40); !r.OK || r.Tokens.Remaining != 10 {
		t.Errorf("b: got %+v, want ok, 10 left", r)
	}
	if r := reserve("c", 20); r.OK || r.RetryAfter != 59*time.Second || r.Never {
		t.Errorf("c: got %+v, want refused until a leaves (59s)", r)
	}
	// a used only 10 of its 50: the 40 come back at once.
	_ = m.Reconcile(ctx, "k", "a", rule, 10)
	if r := reserve("c", 20); !r.OK || r.Tokens.Remaining != 30 {
		t.Errorf("c after reconcile: got %+v, want ok, 30 left", r)
	}
	// b used more than reserved: the overspend counts.
	_ = m.Reconcile(ctx, "k", "b", rule, 70)
	if r := reserve("d", 1); r.OK || r.Tokens.Remaining != 0 {
		t.Errorf("d: got %+v, want refused (10+70+20 = 100 used)", r)
	}
	if r := reserve("e", 101); r.OK || !r.Never {
		t.Errorf("e: got %+v, want refused for good (over the limit alone)", r)
	}
	_ = m.Reconcile(ctx, "k", "nope", rule, 5) // unknown: ignored
	now = now.Add(2 * time.Minute)
	if r := reserve("f", 100); !r.OK {
		t.Errorf("f: got %+v, want ok once the window emptied", r)
	}
}

// Both limits are checked together: a request refused by one takes nothing from the other.
func TestMemoryBoth(t *testing.T) {
	ctx := context.Background()
	m := &Memory{}
	a := Ask{Key: "k", Requests: Rule{Limit: 10, Window: time.Hour}, Tokens: Rule{Limit: 100, Window: time.Hour}, Cost: 60}
	if r, _ := m.Reserve(ctx, a); !r.OK {
		t.Fatalf("got %+v, want ok", r)
	}
	r, _ := m.Reserve(ctx, a)
	if r.OK || r.Requests.Remaining != 9 || r.Tokens.Remaining != 40 {
		t.Errorf("got %+v, want refused by tokens with 9 requests and 40 tokens left", r)
	}
}

// Release gives back a reservation's request and tokens.
func TestMemoryRelease(t *testing.T) {
	ctx := context.Background()
	m := &Memory{}
	a := Ask{Key: "k", ID: "1", Requests: Rule{Limit: 1, Window: time.Minute}, Tokens: Rule{Limit: 100, Window: time.Minute}, Cost: 100}
	if r, _ := m.Reserve(ctx, a); !r.OK {
		t.Fatal("first refused")
	}
	a.ID = "2"
	if r, _ := m.Reserve(ctx, a); r.OK {
		t.Fatal("second admitted over the limit")
	}
	if err := m.Release(ctx, "k", "1"); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.Reserve(ctx, a); !r.OK || r.Requests.Remaining != 0 || r.Tokens.Remaining != 0 {
		t.Fatalf("got %+v after the release, want admitted", r)
	}
}

// A log whose entries all left their window is dropped at the next sweep: the names the
// sign-in throttle counts under (addresses, tokens) do not pile up.
func TestMemorySweep(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	m := &Memory{Now: func() time.Time { return now }}
	rule := Rule{Limit: 10, Window: time.Minute}
	for i := range 100 {
		if _, err := m.Reserve(ctx, Ask{Key: fmt.Sprint("addr-", i), ID: "1", Requests: rule}); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.Len(); got != 100 {
		t.Fatalf("got %d logs, want 100", got)
	}
	now = now.Add(2 * time.Minute)
	if _, err := m.Reserve(ctx, Ask{Key: "late", ID: "1", Requests: rule}); err != nil {
		t.Fatal(err)
	}
	if got := m.Len(); got != 1 {
		t.Errorf("got %d logs after a sweep, want 1 (the late one)", got)
	}
}
