package cache

import (
	"context"
	"testing"
)

func TestFlights(t *testing.T) {
	c := &Cache{Store: &Memory{}}
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		e      *Entry
		failed bool
		want   Outcome
	}{
		{"answer shared", &Entry{Model: "m"}, false, Shared},
		{"answer not to give again", nil, false, Alone},
		{"leader failed", nil, true, Again},
	} {
		lead, fl := c.Join("k")
		if lead == nil || fl != nil {
			t.Fatalf("%s: the first request must lead", tt.name)
		}
		if l2, f2 := c.Join("k"); l2 != nil || f2 == nil {
			t.Fatalf("%s: the second request must follow", tt.name)
		}
		_, fl = c.Join("k")
		lead.End(tt.e, tt.failed)
		lead.End(&Entry{Model: "late"}, false) // only the first End counts
		out, e, err := c.Wait(ctx, fl)
		if err != nil || out != tt.want || e != tt.e {
			t.Errorf("%s: got %v %v %v, want %v", tt.name, out, e, err, tt.want)
		}
	}
	// The flight ended: the next request leads a new one.
	lead, _ := c.Join("k")
	if lead == nil {
		t.Fatal("after End, want a new leader")
	}
	// A follower whose context ends stops waiting; the flight goes on.
	_, fl := c.Join("k")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := c.Wait(cctx, fl); err == nil || c.Waiting() != 0 {
		t.Errorf("got %v, %d waiting; want the context's error and no one waiting", err, c.Waiting())
	}
	lead.End(&Entry{}, false)
}
