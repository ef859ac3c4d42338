package fallback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Timeouts bound one attempt. Zero fields are off.
type Timeouts struct {
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
	Name     string // "provider/model", as clients and logs see it
	Model    string // the upstream's model name
	Provider Provider
	Timeouts Timeouts
}

// Chain is the ordered list of targets of a model alias. It is immutable and safe for
// concurrent use; each request walks it with a Run.
type Chain struct {
	Alias   string
	Targets []Target
	// CommitOnReasoning: a reasoning delta commits an attempt (the default).
	CommitOnReasoning bool
}

// Start begins walking the chain for one request. The Run is owned by the request's
// goroutine.
func (c *Chain) Start(req *llm.Request) *Run {
	return &Run{chain: c, req: req, start: time.Now()}
}

// Run is one request's walk along a chain: which targets were tried and how each ended. Not
// safe for concurrent use.
type Run struct {
	chain    *Chain
	req      *llm.Request
	next     int
	start    time.Time
	Attempts []llm.Attempt
	// retryAfter is the soonest Retry-After a rate-limited attempt asked for.
	retryAfter time.Duration
}

// Errors that tell an attempt's own ends apart from the client leaving (context.Cause).
var (
	errFirstEvent = errors.New("no healthy event within the first-event timeout")
	errIdle       = errors.New("no event within the idle timeout")
	errTotal      = errors.New("attempt over its total timeout")
	errAbandoned  = errors.New("attempt abandoned")
)

// Next tries the targets not tried yet, in order, and returns the stream of the first one that
// commits. Failures before commit that another target may not share fall back; a request
// error or a canceled client is returned at once. When every target failed, the error is the
// exhausted-chain *llm.Error. The caller owns the stream and must Close it.
//
// Next may be called again after a committed stream failed, for a client that has seen
// nothing yet (a non-streamed request): it continues with the following targets.
func (r *Run) Next(ctx context.Context) (*Stream, error) {
	for r.next < len(r.chain.Targets) {
		t := &r.chain.Targets[r.next]
		r.next++
		s, err := r.attempt(ctx, t)
		if err == nil {
			return s, nil
		}
		k := llm.KindOf(err)
		if k == llm.Canceled || !llm.Retryable(k) {
			return nil, err
		}
	}
	return nil, r.exhausted()
}

// Fail records that the committed stream s failed with err after commit.
func (r *Run) Fail(s *Stream, err error) {
	a := &r.Attempts[s.attempt]
	a.Kind = llm.KindOf(err)
	a.Reason = reason(err)
}

// attempt calls t and reads until its first healthy event.
func (r *Run) attempt(ctx context.Context, t *Target) (*Stream, error) {
	r.Attempts = append(r.Attempts, llm.Attempt{Target: t.Name, Start: time.Now()})
	a := &r.Attempts[len(r.Attempts)-1]
	actx, cancel := context.WithCancelCause(ctx)
	s := &Stream{Target: t.Name, Model: t.Model, attempt: len(r.Attempts) - 1, ctx: actx, cancel: cancel, idle: t.Timeouts.Idle}
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
		err = s.classify(ctx, err)
		s.Close()
		a.Kind, a.Reason = llm.KindOf(err), reason(err)
		var le *llm.Error
		if errors.As(err, &le) {
			a.Status = le.Status
			if le.RetryAfter > 0 && (r.retryAfter == 0 || le.RetryAfter < r.retryAfter) {
				r.retryAfter = le.RetryAfter
			}
			if le.Target == "" {
				le.Target = t.Name
			}
		}
		return nil, err
	}
	req := r.req.Clone()
	req.Model = t.Model
	up, err := t.Provider.Stream(actx, req)
	if err != nil {
		return fail(err)
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
			a.Committed = true
			a.FirstEvent = time.Since(a.Start)
			s.firstEvent = time.Since(r.start)
			s.armIdle()
			return s, nil
		}
	}
}

// commits applies the commit rule of DESIGN §3.
func (r *Run) commits(ev *llm.Event) bool {
	if ev.Type == llm.EvReasoning && !r.chain.CommitOnReasoning {
		return false
	}
	return ev.Healthy()
}

// exhausted builds the error for a chain whose every target failed before commit: 429 when
// every failure was a rate limit, else 502, listing each attempt without a secret.
func (r *Run) exhausted() error {
	if len(r.Attempts) == 0 {
		return &llm.Error{Kind: llm.Unavailable, Code: "all_targets_failed", Type: "server_error",
			Message: fmt.Sprintf("model '%s' has no target available", r.chain.Alias)}
	}
	parts := make([]string, len(r.Attempts))
	limited := true
	for i, a := range r.Attempts {
		parts[i] = a.Target + ": " + a.Reason
		limited = limited && a.Kind == llm.RateLimited
	}
	e := &llm.Error{Kind: llm.Unavailable, Code: "all_targets_failed", Type: "server_error",
		Message: fmt.Sprintf("all targets of '%s' failed: %s", r.chain.Alias, strings.Join(parts, "; "))}
	if limited {
		// A client told to retry needs to know when: the soonest end the upstreams gave, or a
		// second when none did.
		e.Kind, e.Code, e.Type = llm.RateLimited, "rate_limit_exceeded", "rate_limit_error"
		e.RetryAfter = max(r.retryAfter, time.Second)
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
	if e.Kind == llm.Timeout || e.Kind == llm.Truncated || (e.Kind == llm.Unavailable && e.Status == 0 && e.Code == "") {
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
	}
	return b.String()
}
