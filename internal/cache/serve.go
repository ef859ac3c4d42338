package cache

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/turn"
)

// Result is what the cache did for a request: the X-Sluice-Cache value.
type Result string

const (
	Hit  Result = "hit"
	Miss Result = "miss"
	// Bypass: the client's Cache-Control, or a request the cache does not take.
	Bypass Result = "bypass"
	// Coalesced: the answer of an identical request that was being answered, on this
	// replica or another.
	Coalesced Result = "coalesced"
)

// Query is a request as the cache sees it, before its round.
type Query struct {
	Policy  Policy
	Alias   string
	Caller  Caller
	Request *llm.Request
	// CacheControl is the client's Cache-Control header (read under Policy.ClientBypass).
	CacheControl string
	// Stream: the client streams, so a leader's answer is shared as its client gets it.
	// Live: a follower streams the answer as it comes (reply.Open); else it waits for the
	// whole (a plain client, or one whose output guardrails hold the answer).
	Stream, Live bool
}

// MaxDetached bounds a leader's round once its own client left: the round goes on for the
// requests that follow it and for the cache, not past this.
const MaxDetached = 10 * time.Minute

// Serve is the cache's turn before a round: it answers q from the cache (a hit, or the
// answer of an identical request in flight) through the request's edge e, on its client's
// wire w, once its output guardrails (judge: turn.Turn.Judge) passed the answer, and
// reports true with the edge's error; or it reports false and, for a miss to store, the
// Fill of its round (turn.Keeper).
func (c *Cache) Serve(ctx context.Context, q Query, e turn.Edge, w turn.Wire, judge func(context.Context, *llm.Response) error) (bool, *Fill, error) {
	a := &reply{e: e, w: w, judge: judge, stream: q.Stream}
	p := q.Policy
	keep := p.Cacheable(q.Request)
	read := keep
	if p.ClientBypass {
		cc := strings.ToLower(q.CacheControl)
		if strings.Contains(cc, "no-store") {
			read, keep = false, false
		} else if strings.Contains(cc, "no-cache") {
			read = false
		}
	}
	key := Key(q.Alias, p.Scope, q.Caller, q.Request)
	if key == "" {
		read, keep = false, false
	}
	fill := &Fill{c: c, p: p, alias: q.Alias, key: key, live: q.Stream}
	if !read {
		a.result(ctx, Bypass, 0)
		if !keep {
			fill = nil
		}
		return false, fill, nil
	}
	if e := c.Get(ctx, q.Alias, key); e != nil {
		return true, nil, a.entry(ctx, e, Hit, c.Age(e))
	}
	// A miss: lead the key's flight, or follow the identical request that leads it.
	var open Follower
	if q.Live {
		open = a
	}
	for {
		lead, fl := c.Join(ctx, key, p.MaxEntryBytes)
		if lead != nil {
			fill.lead = lead
			break
		}
		a.waiting()
		out, e, started, err := c.Follow(ctx, fl, open)
		switch {
		case err != nil:
			if !errors.Is(err, ErrShared) {
				err = &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: err}
			}
			return true, nil, a.fail(ctx, err)
		case out == Shared && started: // its events went out as they came; judged at the end
			if err := a.judge(ctx, &e.Response); err != nil {
				return true, nil, a.fail(ctx, err)
			}
			return true, nil, a.finish(ctx, &e.Response)
		case out == Shared:
			return true, nil, a.entry(ctx, e, Coalesced, c.Age(e))
		}
		if out == Alone {
			break
		}
	}
	a.result(ctx, Miss, 0)
	return false, fill, nil
}

// Fill is a miss to store once its round succeeded: the request's cache key, the recorder
// of what its client's sink received, and its lead of the key's flight (nil: none).
type Fill struct {
	c          *Cache
	p          Policy
	alias, key string
	rec        *Recorder
	lead       *Lead
	live       bool // the leader's client streams: its followers get the answer as it does
	done       bool
}

// Sink is the sink of a round (of each attempt: only the one that answered is the answer)
// served by model and target, that passes to next and records. A live leader's sink also
// writes its flight, and outlives its client: a write to a client that left is dropped,
// the round goes on.
func (f *Fill) Sink(next Sink, model, target string) Sink {
	switch {
	case f.lead != nil && f.live:
		f.lead.start(model, target)
		next = &leadSink{next: next, l: f.lead}
	case f.lead != nil:
		next = &leadSink{next: next} // held: the followers get the whole answer at its end
	}
	f.rec = NewRecorder(next, f.p.MaxEntryBytes)
	return f.rec
}

// leadSink is a leader's: to its client while it reads, and for a live one (l set) to the
// flight always. A client that stopped reading does not end the round.
type leadSink struct {
	next Sink
	l    *Lead
	gone bool
}

func (s *leadSink) Event(ev *llm.Event) error {
	if !s.gone && s.next.Event(ev) != nil {
		s.gone = true
	}
	if s.l != nil {
		s.l.event(ev)
	}
	return nil
}

// Leading reports whether the fill's round answers identical requests too: it must not
// end when its client leaves (Context).
func (f *Fill) Leading() bool { return f != nil && f.lead != nil && !f.done }

// Context is the context of the fill's round: for a leader, ctx without its cancellation
// (the client that leaves does not end the answer others wait for), bounded by
// ctx's deadline or MaxDetached; else ctx. The cancel func must be called.
func (f *Fill) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	if !f.Leading() {
		return ctx, func() {}
	}
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Now().Add(MaxDetached)
	}
	stop := context.AfterFunc(ctx, func() { f.c.left.Add(1) })
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d)
	return rctx, func() { stop(); cancel() }
}

// LeadersLeft is the number of leaders whose client left while their round went on.
func (c *Cache) LeadersLeft() int64 { return c.left.Load() }

// Done stores the answer of a round that succeeded, resp served by model, and hands it to
// the requests that follow it; it returns the bytes stored (0: none) and the entries the
// in-memory store's bound pushed out for them. The client may have
// left: the answer is complete, and the next caller gets it.
func (f *Fill) Done(ctx context.Context, model string, resp *llm.Response) (n, evicted int) {
	e := f.c.Entry(f.p, f.rec, model, resp)
	n, evicted = f.c.put(ctx, f.p, f.alias, f.key, e)
	if f.lead != nil && !f.done {
		f.lead.End(model, resp.Target, f.rec, resp) // after the Put: a request that comes next hits
	}
	f.done = true
	return n, evicted
}

// End ends the fill's lead, if it still holds one, as failed: its round gave no answer (an
// error, a refusal), and a follower takes over.
func (f *Fill) End() {
	if f.lead != nil && !f.done {
		f.lead.Fail()
	}
	f.done = true
}

// Alias is the alias the fill's answer is stored for.
func (f *Fill) Alias() string { return f.alias }
