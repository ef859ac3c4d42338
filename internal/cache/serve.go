package cache

import (
	"context"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Result is what the cache did for a request: the X-Sluice-Cache value.
type Result string

const (
	Hit  Result = "hit"
	Miss Result = "miss"
	// Bypass: the client's Cache-Control, or a request the cache does not take.
	Bypass Result = "bypass"
	// Coalesced: the answer of an identical request that was being answered (a hit that
	// waited for it).
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
}

// Edge is the client's side of a request the cache answers: the HTTP edge implements it
// (headers, the wire), the cache decides. Its methods are called on the request's goroutine.
type Edge interface {
	// Result says the request goes on to its round: a miss, or a bypass.
	Result(r Result)
	// Waiting is called before the request waits for an identical one (a streamed client
	// starts keepalives).
	Waiting()
	// Serve answers the request with e: a hit, or the answer it waited for.
	Serve(e *Entry, r Result) error
	// Fail answers err: the client left while the request waited.
	Fail(err error) error
}

// Serve is the cache's turn before a round: it answers q from the cache (a hit, or the
// answer of an identical request in flight) and reports true with the edge's error, or
// reports false and, for a miss to store, the Fill of its round.
func (c *Cache) Serve(ctx context.Context, q Query, ed Edge) (bool, *Fill, error) {
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
	fill := &Fill{c: c, p: p, alias: q.Alias, key: key}
	if !read {
		ed.Result(Bypass)
		if !keep {
			fill = nil
		}
		return false, fill, nil
	}
	if e := c.Get(ctx, q.Alias, key); e != nil {
		return true, nil, ed.Serve(e, Hit)
	}
	// A miss: lead the key's flight, or wait for the identical request that leads it.
	for {
		lead, fl := c.Join(key)
		if lead != nil {
			fill.lead = lead
			break
		}
		ed.Waiting()
		out, e, err := c.Wait(ctx, fl)
		switch {
		case err != nil:
			return true, nil, ed.Fail(&llm.Error{Kind: llm.Canceled, Message: "client went away", Err: err})
		case out == Shared:
			return true, nil, ed.Serve(e, Coalesced)
		}
		if out == Alone {
			break
		}
	}
	ed.Result(Miss)
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
}

// Sink is the sink of a round (of each attempt: only the one that answered is the
// answer) that passes to next and records.
func (f *Fill) Sink(next Sink) Sink {
	f.rec = NewRecorder(next, f.p.MaxEntryBytes)
	return f.rec
}

// Done stores the answer of a round that succeeded, resp served by model, and hands it to
// the requests waiting for it; it returns the bytes stored (0: none). The client may have
// left: the answer is complete, and the next caller gets it.
func (f *Fill) Done(ctx context.Context, model string, resp *llm.Response) int {
	e := f.c.Entry(f.p, f.rec, model, resp)
	n := f.c.Put(ctx, f.p, f.alias, f.key, e)
	if f.lead != nil {
		f.lead.End(e, false) // the waiting requests get the answer, or go on alone
	}
	return n
}

// End ends the fill's lead, if it still holds one, as failed: its round gave no answer (an
// error, a refusal, its client left), and a waiting request takes over.
func (f *Fill) End() {
	if f.lead != nil {
		f.lead.End(nil, true)
	}
}

// Alias is the alias the fill's answer is stored for.
func (f *Fill) Alias() string { return f.alias }
