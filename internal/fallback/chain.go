package fallback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Timeouts bound one attempt. Zero fields are off.
type Timeouts struct {
	// Connect bounds opening a connection to the upstream. The chain cannot see a dial, so it
	// hands the value to the provider in the attempt's context (see llm.ConnectTimeout); a
	// provider that dials applies it.
	Connect time.Duration
	// FirstEvent bounds the time from the attempt's start to its first healthy event:
	// connecting, the upstream's headers and its preamble all count.
	FirstEvent time.Duration
	// Idle bounds the gap between events after commit.
	Idle time.Duration
	// Total bounds the attempt from its start to its finish.
	Total time.Duration
}

// Target is one "provider/model" of a chain.
type Target struct {
	Name     string // "provider/model", as clients and logs see it; also the health key
	Model    string // the upstream's model name
	Provider Provider
	Timeouts Timeouts
	// Retries is how many more calls the target gets after a failure before commit, before
	// the chain falls back. 0 (the default) never retries. A timeout, a 401/403 and a request
	// error are never retried.
	Retries int
	// Plain is upstream: plain: a non-streamed request is one non-streamed call
	// (llm.Request.Plain) where the provider's wire has one, and Timeouts.FirstEvent bounds
	// the response headers rather than the first event, which comes with the whole body.
	Plain bool
	// Price is what route: cost compares: the target's input plus output price per million
	// tokens (0: not priced, taken as free).
	Price float64
}

// Element is one step of a chain: a single target, or a weighted group of equivalent targets
// of which one is picked per request among those not cooling down. A failed member falls back
// to the next element, not to another member: DESIGN §3, "the chain falls back element by
// element".
type Element struct {
	Targets []Target
	// Weights has one positive weight per target; nil means equal weights.
	Weights []int
	// Route is how a member is picked (route.go); it needs the chain's Load, else weighted.
	Route Route
	// MaxTTFT bounds the first-token p95 of the members route: cost may pick (0: none).
	MaxTTFT time.Duration
}

// Backoff is the wait between retries of one target: the n-th retry waits Base×2ⁿ (at most
// Max), jittered to between half and all of it, and never less than the upstream's
// Retry-After. Zero fields take the defaults.
type Backoff struct {
	Base time.Duration // 250 ms
	Max  time.Duration // 5 s
	// RetryAfterCap is the longest Retry-After a retry waits for (10 s); an upstream that asks
	// for longer is not retried: the chain falls back at once.
	RetryAfterCap time.Duration
}

// Backoff defaults.
const (
	DefaultBackoffBase   = 250 * time.Millisecond
	DefaultBackoffMax    = 5 * time.Second
	DefaultRetryAfterCap = 10 * time.Second
)

// Chain is the ordered list of elements of a model alias. It is immutable once built and safe
// for concurrent use; each request walks it with a Run.
type Chain struct {
	Alias string
	// Elements is the chain, in order.
	Elements []Element
	// Targets is the shorthand for a chain of single targets, used when Elements is empty.
	Targets []Target
	// CommitOnReasoning: a reasoning delta commits an attempt (the default).
	CommitOnReasoning bool
	// Health holds the cooldowns; nil: none, every target is always tried.
	Health  Health
	Backoff Backoff
	// Rand returns a number in [0, 1), for weighted picks and retry jitter. It must be safe
	// for concurrent use; nil is math/rand/v2.
	Rand func() float64
	// Sleep waits d, or until ctx ends with its error; nil waits on a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Log receives configuration problems (a provider refusing the gateway's credentials);
	// never a key. nil: not logged.
	Log *slog.Logger
	// Affinity keeps a conversation on one member of each weighted group while it lasts
	// (an alias's affinity: conversation, issue 46): the member it remembers is picked
	// while it is not cooling, and a new conversation is placed by weight from its hash.
	// nil: every request picks by weight.
	Affinity Affinity
	// Load is what routing learns of targets (load.go): the attempts report to it and the
	// groups' routes read it. nil: none is learned, groups pick by weight.
	Load Load
	// AutoCache puts prompt-cache breakpoints on a request whose client sent none (an
	// alias's prompt_cache: auto), once per round, before any target is called.
	AutoCache bool
}

// Start begins walking the chain for one request. The Run is owned by the request's
// goroutine.
func (c *Chain) Start(req *llm.Request) *Run {
	r := &Run{chain: c, req: c.autoCache(req), start: time.Now(), elems: c.Elements}
	if len(r.elems) == 0 {
		r.elems = make([]Element, len(c.Targets))
		for i := range c.Targets {
			r.elems[i] = Element{Targets: c.Targets[i : i+1]}
		}
	}
	return r
}

// Run is one request's walk along a chain: which targets were tried and how each ended. Not
// safe for concurrent use.
type Run struct {
	chain *Chain
	req   *llm.Request
	elems []Element
	next  int
	start time.Time
	// Attempts has one record per call of a target, in order.
	Attempts []llm.Attempt
	// retryAfter is the soonest Retry-After a rate-limited attempt asked for.
	retryAfter time.Duration
	// coolLeft is the shortest cooldown a failure of this run started (0: none).
	coolLeft time.Duration
	// skipped are the targets passed over because they were cooling down.
	skipped []skipped
	// timedOut are the targets that timed out: never called again by this run.
	timedOut map[string]bool
	// Affinity is what conversation affinity did for the attempt that committed last:
	// "" (none: no group with affinity served), AffinityNew, AffinityKept or AffinityMoved.
	Affinity string
	conv     string  // the conversation key, once computed (affinity.go)
	convKind byte    // 's': conv is the client's session, 'p': the prefix's hash
	looks    []look  // the groups' entries this run read
	look0    [1]look // looks' first backing: one group is the common chain
}

type skipped struct {
	t    *Target
	left time.Duration // of its cooldown, when skipped
}

// Errors that tell an attempt's own ends apart from the client leaving (context.Cause).
var (
	errFirstEvent = errors.New("no healthy event within the first-event timeout")
	errIdle       = errors.New("no event within the idle timeout")
	errTotal      = errors.New("attempt over its total timeout")
	errAbandoned  = errors.New("attempt abandoned")
)

// Exhausted-chain error codes, as the client sees them.
const (
	CodeAllFailed  = "all_targets_failed"
	CodeAllCooling = "all_targets_cooling_down"
	// CodeUnsupported: every target refused to translate the request (400).
	CodeUnsupported = "unsupported_by_targets"
)

// Next walks the elements not tried yet, in order, and returns the stream of the first
// attempt that commits. In each element it picks one target not cooling down (by weight in a
// group), retries it if the target asks, and falls back to the next element on a failure
// another target may not share. A request error (400, 404, 413, 422) or a client that left is
// returned at once, as is. When every element failed, the error is the exhausted-chain
// *llm.Error: 429 with Retry-After when every failure was a rate limit, else 502. When every
// target was cooling down, the one whose cooldown ends first is probed; if the probe fails, the
// error is a 503 (Kind Unavailable, Status 503, Code CodeAllCooling) with Retry-After. The
// caller owns the stream and must Close it.
//
// Next may be called again after a committed stream failed, for a client that has seen
// nothing yet (a non-streamed request): it continues with the following elements.
func (r *Run) Next(ctx context.Context) (*Stream, error) {
	for r.next < len(r.elems) {
		if err := ctx.Err(); err != nil {
			return nil, canceled(ctx)
		}
		el := &r.elems[r.next]
		r.next++
		t := r.pick(ctx, r.next-1, el)
		if t == nil {
			continue
		}
		s, err := r.try(ctx, t)
		if err == nil {
			return s, nil
		}
		if k := llm.KindOf(err); k == llm.Canceled || !llm.Retryable(k) {
			return nil, err
		}
	}
	if len(r.Attempts) == 0 && len(r.skipped) > 0 {
		return r.probe(ctx)
	}
	return nil, r.exhausted()
}

func canceled(ctx context.Context) error {
	return &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: context.Cause(ctx)}
}

// try calls t, and calls it again after a failure before commit as long as its retries
// allow: never after a timeout (a target that timed out is not sent the request again), a
// 401/403 or a request error, never when the upstream's Retry-After is over the cap, and never
// when the target went into cooldown meanwhile.
func (r *Run) try(ctx context.Context, t *Target) (*Stream, error) {
	for n := 0; ; n++ {
		s, err := r.attempt(ctx, t)
		if err == nil {
			return s, nil
		}
		k := llm.KindOf(err)
		if n >= t.Retries || k == llm.Canceled || k == llm.Timeout || k == llm.Auth || k == llm.Unsupported || !llm.Retryable(k) {
			return nil, err
		}
		wait, ok := r.backoff(n, err)
		if !ok {
			return nil, err
		}
		if serr := r.sleep(ctx, wait); serr != nil {
			return nil, canceled(ctx)
		}
		if h := r.chain.Health; h != nil {
			if ok, _ := h.Admit(ctx, t.Name, false); !ok {
				return nil, err
			}
		}
	}
}

// backoff is the wait before retry n (0-based) after err; false when the upstream asked for
// longer than the cap.
func (r *Run) backoff(n int, err error) (time.Duration, bool) {
	b := r.chain.Backoff
	base, ceiling, raCap := b.Base, b.Max, b.RetryAfterCap
	if base <= 0 {
		base = DefaultBackoffBase
	}
	if ceiling <= 0 {
		ceiling = DefaultBackoffMax
	}
	if raCap <= 0 {
		raCap = DefaultRetryAfterCap
	}
	d := base
	for ; n > 0 && d < ceiling; n-- {
		d *= 2
	}
	d = min(d, ceiling)
	d = d/2 + time.Duration(r.rand()*float64(d/2))
	var le *llm.Error
	if errors.As(err, &le) && le.RetryAfter > 0 {
		if le.RetryAfter > raCap {
			return 0, false
		}
		d = max(d, le.RetryAfter)
	}
	return d, true
}

func (r *Run) sleep(ctx context.Context, d time.Duration) error {
	if r.chain.Sleep != nil {
		return r.chain.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// probe applies the all-cooling rule: every target was cooling, so the one whose cooldown
// ends first is tried once (the half-open probe, taken early). If it fails, or another request
// holds its probe, the answer is a 503 with Retry-After.
func (r *Run) probe(ctx context.Context) (*Stream, error) {
	first := r.skipped[0]
	for _, s := range r.skipped[1:] {
		if s.left < first.left {
			first = s
		}
	}
	if ok, _ := r.chain.Health.Admit(ctx, first.t.Name, true); !ok {
		return nil, r.cooling(first.t)
	}
	s, err := r.attempt(ctx, first.t)
	if err == nil {
		return s, nil
	}
	if k := llm.KindOf(err); k == llm.Canceled || !llm.Retryable(k) {
		return nil, err
	}
	return nil, r.cooling(first.t)
}

// cooling is the 503 of a chain whose targets are all cooling down and whose probe of
// probed failed or could not be made. Retry-After is the soonest cooldown end.
func (r *Run) cooling(probed *Target) error {
	soonest := r.coolLeft
	for _, s := range r.skipped {
		if s.t == probed && len(r.Attempts) > 0 {
			continue // its cooldown was just renewed: coolLeft has the new one
		}
		if soonest == 0 || s.left < soonest {
			soonest = s.left
		}
	}
	msg := fmt.Sprintf("all targets of '%s' are cooling down", r.chain.Alias)
	if len(r.Attempts) > 0 {
		a := r.Attempts[len(r.Attempts)-1]
		msg += fmt.Sprintf("; the probe of %s failed: %s", a.Target, a.Reason)
	} else {
		msg += fmt.Sprintf("; %s is being probed", probed.Name)
	}
	return &llm.Error{Kind: llm.Unavailable, Status: 503, Code: CodeAllCooling, Type: "server_error",
		Message: msg, RetryAfter: max(soonest, time.Second)}
}

// attempt calls t and reads until its first healthy event.
func (r *Run) attempt(ctx context.Context, t *Target) (*Stream, error) {
	r.Attempts = append(r.Attempts, llm.Attempt{Target: t.Name, Start: time.Now()})
	idx := len(r.Attempts) - 1
	actx, cancel := context.WithCancelCause(ctx)
	s := &Stream{Target: t.Name, Model: t.Model, run: r, attempt: idx, ctx: actx, cancel: cancel, idle: t.Timeouts.Idle}
	if ld := r.chain.Load; ld != nil {
		ld.Begin(t.Name) // in flight until settle
	}
	if t.Timeouts.Total > 0 {
		s.total = time.AfterFunc(t.Timeouts.Total, func() { cancel(errTotal) })
	}
	var first *time.Timer
	if t.Timeouts.FirstEvent > 0 {
		first = time.AfterFunc(t.Timeouts.FirstEvent, func() { cancel(errFirstEvent) })
	}
	fail := func(err error) (*Stream, error) {
		if first != nil {
			first.Stop()
		}
		if ctx.Err() != nil {
			// The client left: that wins over whatever the attempt's own timers said.
			err = &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: context.Cause(ctx)}
		} else {
			err = s.classify(err)
		}
		s.settle(err)
		s.Close()
		if le := r.record(idx, err); le != nil && le.Kind == llm.Auth && r.chain.Log != nil {
			// The gateway's credentials for this provider are wrong: the operator's problem,
			// not the client's. Never the key, nor the upstream's message (OpenAI's echoes it).
			r.chain.Log.Warn("provider refused the gateway's credentials: check its api_key and headers",
				"alias", r.chain.Alias, "target", t.Name, "status", le.Status)
		}
		return nil, err
	}
	req := r.req.Clone()
	req.Model, req.Plain = t.Model, t.Plain && !req.Stream
	pctx := actx
	if t.Timeouts.Connect > 0 {
		pctx = llm.WithConnectTimeout(actx, t.Timeouts.Connect)
	}
	up, err := t.Provider.Stream(pctx, req)
	if err != nil {
		return fail(err)
	}
	if req.Plain && first != nil {
		first.Stop() // the headers came: the body is the answer, bounded by total
	}
	s.up = up
	for {
		ev, err := up.Recv()
		if err != nil {
			// io.EOF before commit is a stream that ended before saying anything.
			if errors.Is(err, io.EOF) {
				err = &llm.Error{Kind: llm.Truncated, Message: "stream ended before the answer started"}
			}
			return fail(err)
		}
		s.held = append(s.held, ev)
		if r.commits(&ev) {
			if first != nil {
				first.Stop()
			}
			r.committed(ctx, t) // affinity.go
			a := &r.Attempts[idx]
			a.Committed = true
			a.FirstEvent = time.Since(a.Start)
			s.firstEvent = time.Since(r.start)
			if ld := r.chain.Load; ld != nil {
				ld.Latency(t.Name, a.FirstEvent)
			}
			s.armIdle()
			return s, nil
		}
	}
}

// record writes how attempt idx ended into its record and the run's state, and returns the
// error's *llm.Error, if any, with the target named.
func (r *Run) record(idx int, err error) *llm.Error {
	a := &r.Attempts[idx]
	a.Kind, a.Reason, a.End = llm.KindOf(err), reason(err), time.Now()
	if a.Kind == llm.Timeout {
		if r.timedOut == nil {
			r.timedOut = map[string]bool{}
		}
		r.timedOut[a.Target] = true
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		return nil
	}
	a.Status = le.Status
	if le.Kind == llm.RateLimited && le.RetryAfter > 0 && (r.retryAfter == 0 || le.RetryAfter < r.retryAfter) {
		r.retryAfter = le.RetryAfter
	}
	if le.Target == "" {
		le.Target = a.Target
	}
	return le
}

// noteCooldown keeps the shortest cooldown a failure of this run started.
func (r *Run) noteCooldown(left time.Duration) {
	if left > 0 && (r.coolLeft == 0 || left < r.coolLeft) {
		r.coolLeft = left
	}
}

// commits applies the commit rule of DESIGN §3.
func (r *Run) commits(ev *llm.Event) bool {
	if ev.Type == llm.EvReasoning && !r.chain.CommitOnReasoning {
		return false
	}
	return ev.Healthy()
}

// Fail records that the committed stream s failed with err after commit (an error of the
// relay or of the stream): the attempt's record says so and, unless the client left, it
// counts against the target.
func (r *Run) Fail(s *Stream, err error) {
	s.settle(err)
	r.record(s.attempt, err)
}

// exhausted builds the error for a chain whose every element failed before commit: 429 when
// every failure was a rate limit, else 502, listing each attempt without a secret, and the
// targets passed over because they were cooling down.
func (r *Run) exhausted() error {
	if len(r.Attempts) == 0 {
		return &llm.Error{Kind: llm.Unavailable, Code: CodeAllFailed, Type: "server_error",
			Message: fmt.Sprintf("model '%s' has no target available", r.chain.Alias)}
	}
	parts := make([]string, 0, len(r.Attempts)+len(r.skipped))
	limited, unsupported := true, true
	for _, a := range r.Attempts {
		parts = append(parts, a.Target+": "+a.Reason)
		limited = limited && a.Kind == llm.RateLimited
		unsupported = unsupported && a.Kind == llm.Unsupported
	}
	if unsupported && len(r.skipped) == 0 {
		// No target's API can carry the request: the client's to change, not to retry.
		return &llm.Error{Kind: llm.Unsupported, Type: "invalid_request_error", Code: CodeUnsupported,
			Message: fmt.Sprintf("no target of '%s' can serve this request: %s", r.chain.Alias, strings.Join(parts, "; "))}
	}
	for _, s := range r.skipped {
		parts = append(parts, s.t.Name+": skipped, cooling down")
	}
	e := &llm.Error{Kind: llm.Unavailable, Code: CodeAllFailed, Type: "server_error",
		Message: fmt.Sprintf("all targets of '%s' failed: %s", r.chain.Alias, strings.Join(parts, "; "))}
	if limited {
		// A client told to retry needs to know when: the soonest end the upstreams gave, else
		// the soonest cooldown end, else a second.
		e.Kind, e.Code, e.Type = llm.RateLimited, "rate_limit_exceeded", "rate_limit_error"
		ra := r.retryAfter
		if ra == 0 {
			ra = r.coolLeft
		}
		e.RetryAfter = max(ra, time.Second)
	}
	return e
}

// Elapsed is the time since the run started.
func (r *Run) Elapsed() time.Duration { return time.Since(r.start) }

// reason is a short, secret-free description of an attempt's failure.
func reason(err error) string {
	var e *llm.Error
	if !errors.As(err, &e) {
		return llm.KindOf(err).String()
	}
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d ", e.Status)
	}
	switch {
	case e.Kind == llm.Auth:
		b.WriteString("the provider refused the gateway's credentials")
		return b.String()
	case e.Code != "":
		b.WriteString(e.Code)
	case e.Type != "":
		b.WriteString(e.Type)
	default:
		b.WriteString(e.Kind.String())
	}
	// These messages are the gateway's own (an adapter's refusal, a timer, a cut): no upstream
	// text, so no secret, and the client needs them to know what to change.
	if e.Kind == llm.Timeout || e.Kind == llm.Truncated || e.Kind == llm.Unsupported || (e.Kind == llm.Unavailable && e.Status == 0 && e.Code == "") {
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
	}
	return b.String()
}

// netTimeout turns a connection that timed out (the provider's dial, under the connect
// timeout) into a Timeout: the target is then not sent the request again.
func netTimeout(err error) error {
	var ne net.Error
	if llm.KindOf(err) == llm.Unavailable && errors.As(err, &ne) && ne.Timeout() {
		return &llm.Error{Kind: llm.Timeout, Message: "connection timed out", Err: err}
	}
	return err
}
