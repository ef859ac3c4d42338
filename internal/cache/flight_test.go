package cache

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// follower opens a collecting sink, or fails.
type follower struct {
	got  collect
	fail error
}

func (f *follower) Open(string, string) (Sink, error) { return &f.got, f.fail }

func TestFlights(t *testing.T) {
	c := &Cache{Store: &Memory{}}
	ctx := context.Background()
	resp := answer("stop", "")
	rec := recorded(t, 0, "hel", "lo")
	for _, tt := range []struct {
		name    string
		live    bool // the follower streams as it comes
		end     func(l *Lead)
		want    Outcome
		started bool
		err     error
	}{
		{"answer shared", false, func(l *Lead) { l.End("m", "p/m", rec, resp) }, Shared, false, nil},
		{"answer shared live", true, func(l *Lead) { l.End("m", "p/m", rec, resp) }, Shared, true, nil},
		{"answer too large", false, func(l *Lead) { l.End("m", "p/m", recorded(t, 10, "0123456789ab"), resp) }, Alone, false, nil},
		{"leader failed", true, func(l *Lead) { l.Fail() }, Again, false, nil},
		{"leader failed midstream", true, func(l *Lead) { l.start("m", "p/m"); l.Fail() }, 0, true, ErrShared},
	} {
		lead, fl := c.Join(ctx, "k", 1<<20)
		if lead == nil || fl != nil {
			t.Fatalf("%s: the first request must lead", tt.name)
		}
		_, fl = c.Join(ctx, "k", 1<<20)
		if fl == nil {
			t.Fatalf("%s: the second request must follow", tt.name)
		}
		tt.end(lead)
		lead.End("late", "x", rec, resp) // only the first end counts
		f := &follower{}
		var open Follower
		if tt.live {
			open = f
		}
		out, e, started, err := c.Follow(ctx, fl, open)
		if out != tt.want || started != tt.started || !errors.Is(err, tt.err) {
			t.Errorf("%s: got %v started %v %v, want %v started %v %v", tt.name, out, started, err, tt.want, tt.started, tt.err)
		}
		if out == Shared && (e.Model != "m" || len(e.Events) != 3 || e.Response.Usage.TotalTokens != 5 || e.Response.Attempts != nil) {
			t.Errorf("%s: got entry %+v, want the leader's answer", tt.name, e)
		}
		if tt.live && out == Shared && len(f.got.evs) != 3 {
			t.Errorf("%s: got %d events on the follower's sink, want 3", tt.name, len(f.got.evs))
		}
	}
	// The flight ended: the next request leads a new one.
	lead, _ := c.Join(ctx, "k", 0)
	if lead == nil {
		t.Fatal("after End, want a new leader")
	}
	// A follower whose context ends stops waiting; the flight goes on.
	_, fl := c.Join(ctx, "k", 0)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := c.Follow(cctx, fl, nil); err == nil || c.Waiting() != 0 {
		t.Errorf("got %v, %d waiting; want the context's error and no one waiting", err, c.Waiting())
	}
	// A live follower gets the events as the leader writes them, before the end.
	f := &follower{}
	got := make(chan error, 1)
	go func() { _, _, _, err := c.Follow(ctx, fl, f); got <- err }()
	s := (&Fill{c: c, lead: lead, live: true, p: Policy{TTL: 1}}).Sink(discard{}, "m", "p/m")
	_ = s.Event(&llm.Event{Type: llm.EvText, Text: "first"})
	for c.Waiting() != 1 || lead.f.len() < 2 {
		select {
		case err := <-got:
			t.Fatalf("the follower ended before the leader: %v", err)
		default:
			runtime.Gosched()
		}
	}
	lead.End("m", "p/m", nil, resp)
	if err := <-got; err != nil || len(f.got.evs) != 1 || f.got.evs[0].Text != "first" {
		t.Errorf("got %v %+v, want the leader's live event", err, f.got.evs)
	}
}
