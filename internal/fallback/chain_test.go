package fallback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

func types(evs []llm.Event) string {
	var b []string
	for _, e := range evs {
		s := e.Type.String()
		if e.Text != "" {
			s += ":" + e.Text
		}
		b = append(b, s)
	}
	return strings.Join(b, ",")
}

func TestCommitRule(t *testing.T) {
	tests := []struct {
		name        string
		a           script
		noReasoning bool // commit_on_reasoning: false
		want        string
		bCalls      int
	}{
		{"role-only then error falls back", script{events: []llm.Event{evRole}, end: errInband},
			false, "start,text:Hello,text: world.,done", 1},
		{"preamble held and replayed once", answer(evRole, evUsage, evEmpty, evText, evDone),
			false, "start,usage,text,text:Hello,done", 0},
		{"empty answer with finish commits", answer(evRole, evDone), false, "start,done", 0},
		{"refusal commits", answer(evRole, evRefuse, evDone), false, "start,refusal:No.,done", 0},
		{"tool call commits", answer(evRole, evTool, evDone), false, "start,tool_call,done", 0},
		{"reasoning commits", script{events: []llm.Event{evRole, evReason}, end: errInband},
			false, "start,reasoning:Thinking", 0},
		{"reasoning does not commit when off", script{events: []llm.Event{evRole, evReason}, end: errInband},
			true, "start,text:Hello,text: world.,done", 1},
		{"reasoning held then text commits", answer(evRole, evReason, evText, evDone),
			true, "start,reasoning:Thinking,text:Hello,done", 0},
		{"end before commit falls back", answer(evRole, evUsage), false, "start,text:Hello,text: world.,done", 1},
		{"cut before commit falls back", script{events: []llm.Event{evRole}, end: errCut},
			false, "start,text:Hello,text: world.,done", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newFake(tt.a), newFake(ok)
			c := &fallback.Chain{Alias: "x", CommitOnReasoning: !tt.noReasoning,
				Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
			run := c.Start(req())
			s, err := run.Next(context.Background())
			if err != nil {
				t.Fatalf("got error %v, want a stream", err)
			}
			defer s.Close()
			evs, _ := readAll(t, s)
			if got := types(evs); got != tt.want {
				t.Errorf("got events %s, want %s", got, tt.want)
			}
			if got := b.Calls(); got != tt.bCalls {
				t.Errorf("got %d calls of b, want %d", got, tt.bCalls)
			}
			if got := a.Calls(); got != 1 {
				t.Errorf("got %d calls of a, want 1", got)
			}
		})
	}
}

func TestFallbackCauses(t *testing.T) {
	netTimeout := &llm.Error{Kind: llm.Unavailable, Message: "mock: dial tcp: i/o timeout",
		Err: &net.OpError{Op: "dial", Err: timeoutErr{}}}
	tests := []struct {
		name     string
		a        script
		kind     llm.Kind
		status   int
		fallsTo  bool
		asIs     error // the error Next returns, when it does not fall back
		firstEvt time.Duration
	}{
		{"429", script{open: err429}, llm.RateLimited, 429, true, nil, 0},
		{"500", script{open: err500}, llm.Unavailable, 500, true, nil, 0},
		{"401", script{open: err401}, llm.Auth, 401, true, nil, 0},
		{"connection refused", script{open: errRefused}, llm.Unavailable, 0, true, nil, 0},
		{"connect timeout", script{open: netTimeout}, llm.Timeout, 0, true, nil, 0},
		{"error in a 200 stream", script{events: []llm.Event{evRole}, end: errInband}, llm.Unavailable, 0, true, nil, 0},
		{"stalled first event", script{events: []llm.Event{evRole}, stall: true}, llm.Timeout, 0, true, nil, 50 * time.Millisecond},
		{"400 as is", script{open: err400}, llm.Invalid, 400, false, err400, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := newFake(tt.a), newFake(ok)
				ta := target("p/a", a)
				ta.Timeouts.FirstEvent = tt.firstEvt
				c := &fallback.Chain{Alias: "x", CommitOnReasoning: true, Targets: []fallback.Target{ta, target("p/b", b)}}
				run := c.Start(req())
				s, err := run.Next(context.Background())
				if !tt.fallsTo {
					if err != tt.asIs {
						t.Fatalf("got error %v, want %v as is", err, tt.asIs)
					}
					if b.Calls() != 0 {
						t.Errorf("got %d calls of b, want 0", b.Calls())
					}
					return
				}
				if err != nil {
					t.Fatalf("got error %v, want b to serve", err)
				}
				s.Close()
				if s.Target != "p/b" || a.Calls() != 1 || b.Calls() != 1 {
					t.Errorf("got target %s, calls a=%d b=%d, want p/b, 1 and 1", s.Target, a.Calls(), b.Calls())
				}
				if len(run.Attempts) != 2 {
					t.Fatalf("got %d attempts, want 2", len(run.Attempts))
				}
				at := run.Attempts[0]
				if at.Target != "p/a" || at.Kind != tt.kind || at.Status != tt.status || at.Committed || at.Reason == "" {
					t.Errorf("got attempt %+v, want p/a, kind %v, status %d, not committed, a reason", at, tt.kind, tt.status)
				}
				if at := run.Attempts[1]; at.Target != "p/b" || at.Kind != llm.KindNone || !at.Committed || at.Start.IsZero() {
					t.Errorf("got attempt %+v, want p/b served, committed", at)
				}
			})
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestAfterCommit(t *testing.T) {
	tests := []struct {
		name  string
		a     script
		idle  time.Duration
		kind  llm.Kind
		texts string
	}{
		{"error after text", script{events: []llm.Event{evRole, evText}, end: errInband}, 0, llm.Unavailable, "start,text:Hello"},
		{"cut after text", script{events: []llm.Event{evRole, evText}, end: errCut}, 0, llm.Truncated, "start,text:Hello"},
		{"idle stall after text", script{events: []llm.Event{evRole, evText}, stall: true}, time.Second, llm.Timeout, "start,text:Hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := newFake(tt.a), newFake(ok)
				ta := target("p/a", a)
				ta.Timeouts.Idle = tt.idle
				c := &fallback.Chain{Alias: "x", CommitOnReasoning: true, Targets: []fallback.Target{ta, target("p/b", b)}}
				run := c.Start(req())
				s, err := run.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				evs, err := readAll(t, s)
				if types(evs) != tt.texts || llm.KindOf(err) != tt.kind {
					t.Errorf("got %s then %v, want %s then kind %v", types(evs), err, tt.texts, tt.kind)
				}
				var le *llm.Error
				if !errors.As(err, &le) || le.Target != "p/a" {
					t.Errorf("got error %v, want it to name p/a", err)
				}
				if b.Calls() != 0 {
					t.Errorf("got %d calls of b, want none after commit", b.Calls())
				}
				if _, err2 := s.Recv(); err2 != err {
					t.Errorf("got %v on the next Recv, want the sticky %v", err2, err)
				}
				run.Fail(s, err)
				if at := run.Attempts[0]; !at.Committed || at.Kind != tt.kind {
					t.Errorf("got attempt %+v, want committed with kind %v", at, tt.kind)
				}
			})
		})
	}
}

// A non-streamed client has seen nothing: after a committed failure Next goes on.
func TestNextAfterCommittedFailure(t *testing.T) {
	a, b := newFake(script{events: []llm.Event{evRole, evText}, end: errInband}), newFake(ok)
	c := &fallback.Chain{Alias: "x", CommitOnReasoning: true, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	run := c.Start(req())
	s, err := run.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, s)
	s.Close()
	run.Fail(s, err)
	s, err = run.Next(context.Background())
	if err != nil {
		t.Fatalf("got %v, want b to serve", err)
	}
	defer s.Close()
	if evs, err := readAll(t, s); err != nil || types(evs) != "start,text:Hello,text: world.,done" {
		t.Errorf("got %s %v, want b's whole answer", types(evs), err)
	}
	if len(run.Attempts) != 2 || run.Attempts[0].Kind != llm.Unavailable || !run.Attempts[0].Committed {
		t.Errorf("got attempts %+v, want a committed and failed, then b", run.Attempts)
	}
}

func TestExhausted(t *testing.T) {
	tests := []struct {
		name       string
		a, b       script
		status     int
		code       string
		retryAfter time.Duration
		msg        []string
	}{
		{"all fail", script{open: err500}, script{open: errRefused}, 502, "all_targets_failed", 0,
			[]string{"all targets of 'x' failed", "p/a: 500 server_error", "p/b: unavailable: mock: dial tcp"}},
		{"all rate limited", script{open: err429}, script{open: &llm.Error{Kind: llm.RateLimited, Status: 429, RetryAfter: 5e9}},
			429, "rate_limit_exceeded", 2 * time.Second, []string{"p/a: 429 rate_limit_exceeded", "p/b: 429"}},
		{"rate limited without Retry-After", script{open: &llm.Error{Kind: llm.RateLimited, Status: 429}},
			script{open: &llm.Error{Kind: llm.RateLimited, Status: 429}}, 429, "rate_limit_exceeded", time.Second, nil},
		{"401 is never shown", script{open: err401}, script{open: err500}, 502, "all_targets_failed", 0,
			[]string{"p/a: 401 the provider refused the gateway's credentials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fallback.Chain{Alias: "x", Targets: []fallback.Target{target("p/a", newFake(tt.a)), target("p/b", newFake(tt.b))}}
			_, err := c.Start(req()).Next(context.Background())
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want an *llm.Error", err)
			}
			if got := llm.HTTPStatus(err); got != tt.status || le.Code != tt.code || le.RetryAfter != tt.retryAfter {
				t.Errorf("got status %d code %s retry after %v, want %d %s %v", got, le.Code, le.RetryAfter, tt.status, tt.code, tt.retryAfter)
			}
			for _, m := range tt.msg {
				if !strings.Contains(le.Message, m) {
					t.Errorf("got message %q, want it to contain %q", le.Message, m)
				}
			}
			if strings.Contains(le.Message, "sk-abc") {
				t.Errorf("got message %q, want no key", le.Message)
			}
		})
	}
}

func TestAuthLogged(t *testing.T) {
	var buf bytes.Buffer
	c := &fallback.Chain{Alias: "x", Log: slog.New(slog.NewTextHandler(&buf, nil)),
		Targets: []fallback.Target{target("p/a", newFake(script{open: err401})), target("p/b", newFake(ok))}}
	s, err := c.Start(req()).Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	log := buf.String()
	if !strings.Contains(log, "credentials") || !strings.Contains(log, "target=p/a") || !strings.Contains(log, "status=401") {
		t.Errorf("got log %q, want a configuration warning naming p/a and 401", log)
	}
	if strings.Contains(log, "sk-abc") {
		t.Errorf("got log %q, want no key", log)
	}
}

// sleeps records the backoff waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestRetries(t *testing.T) {
	retryAfter := func(d time.Duration) *llm.Error {
		return &llm.Error{Kind: llm.RateLimited, Status: 429, RetryAfter: d}
	}
	tests := []struct {
		name    string
		a       []script
		retries int
		aCalls  int
		served  string
		waits   []time.Duration // each wait is within [w/2, w], or exactly w for a Retry-After
		exact   bool
	}{
		{"no retries unless asked", []script{{open: err500}, ok}, 0, 1, "p/b", nil, false},
		{"500 then success", []script{{open: err500}, {open: err500}, ok}, 2, 3, "p/a",
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, false},
		{"retries run out", []script{{open: err500}}, 2, 3, "p/b",
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, false},
		{"backoff capped", []script{{open: err500}}, 4, 5, "p/b",
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}, false},
		{"Retry-After honoured", []script{{open: retryAfter(2 * time.Second)}, ok}, 1, 2, "p/a",
			[]time.Duration{2 * time.Second}, true},
		{"Retry-After over the cap falls back", []script{{open: retryAfter(time.Minute)}, ok}, 3, 1, "p/b", nil, false},
		{"error in the stream before commit", []script{{events: []llm.Event{evRole}, end: errInband}, ok}, 1, 2, "p/a",
			[]time.Duration{100 * time.Millisecond}, false},
		{"never after a timeout", []script{{open: &llm.Error{Kind: llm.Timeout}}, ok}, 3, 1, "p/b", nil, false},
		{"never after 401", []script{{open: err401}, ok}, 3, 1, "p/b", nil, false},
		{"never after 400", []script{{open: err400}, ok}, 3, 1, "", nil, false},
		{"never after commit", []script{{events: []llm.Event{evRole, evText}, end: errInband}, ok}, 3, 1, "p/a", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newFake(tt.a...), newFake(ok)
			ta := target("p/a", a)
			ta.Retries = tt.retries
			var sl sleeps
			c := &fallback.Chain{Alias: "x", Targets: []fallback.Target{ta, target("p/b", b)}, Sleep: sl.sleep,
				Rand:    rand.New(rand.NewPCG(1, 2)).Float64,
				Backoff: fallback.Backoff{Base: 100 * time.Millisecond, Max: 300 * time.Millisecond, RetryAfterCap: 10 * time.Second}}
			s, err := c.Start(req()).Next(context.Background())
			served := ""
			if err == nil {
				served = s.Target
				readAll(t, s)
				s.Close()
			}
			if served != tt.served || a.Calls() != tt.aCalls {
				t.Errorf("got served %q (err %v) after %d calls of a, want %q after %d", served, err, a.Calls(), tt.served, tt.aCalls)
			}
			if len(sl.d) != len(tt.waits) {
				t.Fatalf("got waits %v, want %v", sl.d, tt.waits)
			}
			for i, w := range tt.waits {
				if d := sl.d[i]; (tt.exact && d != w) || (!tt.exact && (d < w/2 || d > w)) {
					t.Errorf("got wait %d %v, want %v (jittered down to half)", i, d, w)
				}
			}
		})
	}
}

func TestRetryWaitCanceled(t *testing.T) {
	a, b := newFake(script{open: err500}, ok), newFake(ok)
	ta := target("p/a", a)
	ta.Retries = 2
	ctx, cancel := context.WithCancel(context.Background())
	c := &fallback.Chain{Alias: "x", Targets: []fallback.Target{ta, target("p/b", b)},
		Sleep: func(context.Context, time.Duration) error { cancel(); return context.Canceled }}
	_, err := c.Start(req()).Next(ctx)
	if llm.KindOf(err) != llm.Canceled || a.Calls() != 1 || b.Calls() != 0 {
		t.Errorf("got %v, calls a=%d b=%d, want Canceled after one call and none of b", err, a.Calls(), b.Calls())
	}
}

// A client that leaves while the chain holds back cancels the attempt in flight and starts
// no other.
func TestCancelWhileHoldingBack(t *testing.T) {
	a := newFake(script{events: []llm.Event{evRole}, stall: true})
	a.called = make(chan struct{}, 1)
	b := newFake(ok)
	h := &fallback.Memory{}
	c := &fallback.Chain{Alias: "x", Health: h, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-a.called
		cancel()
	}()
	run := c.Start(req())
	_, err := run.Next(ctx)
	if llm.KindOf(err) != llm.Canceled {
		t.Fatalf("got %v, want Canceled", err)
	}
	if a.Canceled() != 1 || b.Calls() != 0 {
		t.Errorf("got a canceled %d, b calls %d, want 1 and 0", a.Canceled(), b.Calls())
	}
	if run.Attempts[0].Kind != llm.Canceled {
		t.Errorf("got attempt %+v, want Canceled", run.Attempts[0])
	}
	// Never a failure of the target.
	for range 5 {
		if okd, _ := h.Admit(context.Background(), "p/a", false); !okd {
			t.Fatal("a canceled client counted against the target")
		}
	}
	if _, err := c.Start(req()).Next(ctx); llm.KindOf(err) != llm.Canceled || a.Calls() != 1 {
		t.Errorf("got %v and %d calls, want Canceled with no new attempt", err, a.Calls())
	}
}

func TestConnectTimeoutPassed(t *testing.T) {
	var got time.Duration
	var set bool
	p := providerFunc(func(ctx context.Context, _ *llm.Request) (llm.Stream, error) {
		got, set = llm.ConnectTimeout(ctx)
		return newFake(ok).Stream(ctx, nil)
	})
	ta := target("p/a", p)
	ta.Timeouts.Connect = 5 * time.Second
	s, err := (&fallback.Chain{Alias: "x", Targets: []fallback.Target{ta}}).Start(req()).Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got != 5*time.Second || !set {
		t.Errorf("got connect timeout %v %v, want 5s", got, set)
	}
}

type providerFunc func(context.Context, *llm.Request) (llm.Stream, error)

func (f providerFunc) Stream(ctx context.Context, r *llm.Request) (llm.Stream, error) {
	return f(ctx, r)
}

func TestTotalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(script{events: []llm.Event{evRole, evText}, stall: true})
		ta := target("p/a", a)
		ta.Timeouts = fallback.Timeouts{Idle: time.Hour, Total: time.Minute}
		s, err := (&fallback.Chain{Alias: "x", Targets: []fallback.Target{ta}}).Start(req()).Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		start := time.Now()
		_, err = readAll(t, s)
		if llm.KindOf(err) != llm.Timeout || time.Since(start) != time.Minute {
			t.Errorf("got %v after %v, want a Timeout after 1m", err, time.Since(start))
		}
	})
}

// A target that timed out is not sent the request again, even from another element.
func TestTimedOutNotAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFake(script{events: []llm.Event{evRole}, stall: true}, ok)
		ta := target("p/a", a)
		ta.Timeouts.FirstEvent = time.Second
		b := newFake(script{open: err500})
		c := &fallback.Chain{Alias: "x", Elements: []fallback.Element{
			{Targets: []fallback.Target{ta}}, {Targets: []fallback.Target{target("p/b", b)}}, {Targets: []fallback.Target{ta}}}}
		_, err := c.Start(req()).Next(context.Background())
		if llm.KindOf(err) != llm.Unavailable || a.Calls() != 1 {
			t.Errorf("got %v after %d calls of a, want the exhausted chain after one", err, a.Calls())
		}
	})
}

func TestWeightedSplit(t *testing.T) {
	x, y, z := newFake(ok), newFake(ok), newFake(ok)
	src := rand.New(rand.NewPCG(7, 7))
	var mu sync.Mutex
	c := &fallback.Chain{Alias: "x", Rand: func() float64 { mu.Lock(); defer mu.Unlock(); return src.Float64() },
		Elements: []fallback.Element{{Targets: []fallback.Target{target("p/x", x), target("p/y", y), target("p/z", z)}, Weights: []int{3, 1, 0 + 4}}}}
	const n = 8000
	for range n {
		s, err := c.Start(req()).Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	for _, tc := range []struct {
		name string
		f    *fake
		want float64
	}{{"x", x, 3.0 / 8}, {"y", y, 1.0 / 8}, {"z", z, 4.0 / 8}} {
		if got := float64(tc.f.Calls()) / n; got < tc.want-0.02 || got > tc.want+0.02 {
			t.Errorf("%s: got share %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
}

// A failed group member falls back to the next element, not to another member.
func TestGroupFallsBackToNextElement(t *testing.T) {
	x, y, b := newFake(script{open: err500}), newFake(script{open: err500}), newFake(ok)
	c := &fallback.Chain{Alias: "x", Rand: func() float64 { return 0 }, Elements: []fallback.Element{
		{Targets: []fallback.Target{target("p/x", x), target("p/y", y)}},
		{Targets: []fallback.Target{target("p/b", b)}}}}
	s, err := c.Start(req()).Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Target != "p/b" || x.Calls() != 1 || y.Calls() != 0 {
		t.Errorf("got %s with calls x=%d y=%d, want p/b after x only", s.Target, x.Calls(), y.Calls())
	}
}

// Cooling group members are not picked while another member is not.
func TestGroupSkipsCooling(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fallback.Memory{Now: func() time.Time { return now }}
	h.Failure(context.Background(), "p/x", time.Minute)
	x, y := newFake(ok), newFake(ok)
	c := &fallback.Chain{Alias: "x", Health: h, Elements: []fallback.Element{
		{Targets: []fallback.Target{target("p/x", x), target("p/y", y)}, Weights: []int{100, 1}}}}
	for range 20 {
		s, err := c.Start(req()).Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, s)
		s.Close()
	}
	if x.Calls() != 0 || y.Calls() != 20 {
		t.Errorf("got calls x=%d y=%d, want 0 and 20", x.Calls(), y.Calls())
	}
}

func TestCooldownInChain(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fallback.Memory{Threshold: 2, CoolOff: 10 * time.Second, MaxCoolOff: time.Minute, Now: func() time.Time { return now }}
	a := newFake(script{open: err500}, script{open: err500}, ok)
	b := newFake(ok)
	c := &fallback.Chain{Alias: "x", Health: h, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	serve := func() string {
		t.Helper()
		s, err := c.Start(req()).Next(context.Background())
		if err != nil {
			t.Fatalf("got %v, want an answer", err)
		}
		defer s.Close()
		readAll(t, s)
		return s.Target
	}
	for i := range 2 {
		if got := serve(); got != "p/b" {
			t.Fatalf("request %d: got %s, want p/b", i, got)
		}
	}
	// Two failures in a row: a cools down and is skipped.
	serve()
	if a.Calls() != 2 {
		t.Fatalf("got %d calls of a, want 2: it should be cooling", a.Calls())
	}
	now = now.Add(10 * time.Second)
	// The cool-off ended: one probe, which succeeds and closes the circuit.
	if got := serve(); got != "p/a" || a.Calls() != 3 {
		t.Fatalf("got %s after %d calls of a, want a probed and serving", got, a.Calls())
	}
	if got := serve(); got != "p/a" {
		t.Errorf("got %s, want a healthy again", got)
	}
}

func TestAllCooling(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fallback.Memory{Threshold: 1, CoolOff: 10 * time.Second, MaxCoolOff: time.Minute, Now: func() time.Time { return now }}
	a, b := newFake(script{open: err500}), newFake(script{open: err500})
	c := &fallback.Chain{Alias: "x", Health: h, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	h.Failure(context.Background(), "p/a", 30*time.Second) // ends at 1030
	h.Failure(context.Background(), "p/b", 0)              // ends at 1010: probed first
	run := c.Start(req())
	_, err := run.Next(context.Background())
	var le *llm.Error
	if !errors.As(err, &le) || llm.HTTPStatus(err) != 503 || le.Code != fallback.CodeAllCooling {
		t.Fatalf("got %v (status %d), want a 503 all_targets_cooling_down", err, llm.HTTPStatus(err))
	}
	if a.Calls() != 0 || b.Calls() != 1 || len(run.Attempts) != 1 || run.Attempts[0].Target != "p/b" {
		t.Errorf("got calls a=%d b=%d attempts %+v, want one probe of p/b", a.Calls(), b.Calls(), run.Attempts)
	}
	if le.RetryAfter <= 0 || !strings.Contains(le.Message, "probe of p/b failed") {
		t.Errorf("got Retry-After %v message %q, want a Retry-After and the failed probe named", le.RetryAfter, le.Message)
	}
	// Every request made while all targets cool probes again (one probe at a time): this
	// one succeeds and serves.
	b.mu.Lock()
	b.scripts = []script{ok}
	b.mu.Unlock()
	s, err := c.Start(req()).Next(context.Background())
	if err != nil {
		t.Fatalf("got %v, want the second probe of p/b to serve", err)
	}
	readAll(t, s)
	s.Close()
	if s.Target != "p/b" || a.Calls() != 0 || b.Calls() != 2 {
		t.Errorf("got %s calls a=%d b=%d, want p/b probed again", s.Target, a.Calls(), b.Calls())
	}
}

// While one request holds the probe, another made when all targets cool gets the 503 at once.
func TestAllCoolingProbeInFlight(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fallback.Memory{Threshold: 1, Now: func() time.Time { return now }}
	h.Failure(context.Background(), "p/a", 0)
	if ok, _ := h.Admit(context.Background(), "p/a", true); !ok {
		t.Fatal("the first forced probe was refused")
	}
	a := newFake(ok)
	c := &fallback.Chain{Alias: "x", Health: h, Targets: []fallback.Target{target("p/a", a)}}
	_, err := c.Start(req()).Next(context.Background())
	var le *llm.Error
	if !errors.As(err, &le) || llm.HTTPStatus(err) != 503 || le.RetryAfter != 5*time.Second || a.Calls() != 0 {
		t.Errorf("got %v, retry after %v, %d calls, want a 503 with Retry-After 5s and no call", err, le.RetryAfter, a.Calls())
	}
}

func TestAllCoolingProbeServes(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fallback.Memory{Threshold: 1, Now: func() time.Time { return now }}
	a, b := newFake(ok), newFake(ok)
	h.Failure(context.Background(), "p/a", 0)
	h.Failure(context.Background(), "p/b", 0)
	c := &fallback.Chain{Alias: "x", Health: h, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	s, err := c.Start(req()).Next(context.Background())
	if err != nil {
		t.Fatalf("got %v, want the probe to serve", err)
	}
	readAll(t, s)
	s.Close()
	if s.Target != "p/a" || a.Calls() != 1 || b.Calls() != 0 {
		t.Errorf("got %s calls a=%d b=%d, want p/a probed (its cooldown ends first)", s.Target, a.Calls(), b.Calls())
	}
	if ok, _ := h.Admit(context.Background(), "p/a", false); !ok {
		t.Errorf("got p/a still cooling, want its success to close the circuit")
	}
}

func ExampleChain() {
	c := &fallback.Chain{Alias: "default", CommitOnReasoning: true, Health: &fallback.Memory{},
		Elements: []fallback.Element{
			{Targets: []fallback.Target{{Name: "openai/gpt-4.1-mini", Model: "gpt-4.1-mini", Provider: newFake(script{open: err500})}}},
			{Targets: []fallback.Target{{Name: "local/llama3", Model: "llama3", Provider: newFake(ok)}}},
		}}
	run := c.Start(&llm.Request{})
	s, err := run.Next(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.Target, len(run.Attempts))
	// Output: local/llama3 2
}
