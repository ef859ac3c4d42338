package redisstore_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Three replicas share their routing samples through Redis (issue 49): the latency one
// learned and the attempts in flight on each reach the others at their next exchange, and
// a replica that never called a target routes away from its slowness. With Redis down an
// exchange fails at once and the replica keeps what it had.
func TestSamplesAcrossReplicas(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		aliases := map[string][]string{"pool": {"p/a", "p/b"}}
		var meters []*fallback.Meter
		var shares []*fallback.Share
		for _, name := range []string{"r1", "r2", "r3"} {
			m := &fallback.Meter{}
			meters = append(meters, m)
			shares = append(shares, &fallback.Share{Meter: m, Store: replica(t, srv, true, nil).Samples(),
				Replica: name + t.Name(), Aliases: aliases})
		}
		meters[0].Latency("p/a", 300*time.Millisecond)
		meters[0].Begin("p/a")
		meters[1].Begin("p/a")
		meters[1].Latency("p/b", 20*time.Millisecond)
		ctx := context.Background()
		for range 2 {
			for i, s := range shares {
				if err := s.Tick(ctx); err != nil {
					t.Fatalf("replica %d: %v", i+1, err)
				}
			}
		}
		v := meters[2].View("p/a")
		if v.Latency < 290*time.Millisecond || v.InFlight != 2 || !v.Fresh {
			t.Errorf("replica 3's view of p/a: got %+v, want about 300ms, 2 in flight, fresh", v)
		}
		// Replica 3's chain never called either target: it routes by the fleet's samples.
		ch := &fallback.Chain{Alias: "pool", Load: meters[2], Elements: []fallback.Element{{Route: fallback.RouteLatency,
			Targets: []fallback.Target{{Name: "p/a", Provider: answering{}}, {Name: "p/b", Provider: answering{}}}}}}
		got := map[string]int{}
		for range 100 {
			s, err := ch.Start(chatRequest()).Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got[s.Target]++
			s.Close()
		}
		if got["p/b"] < 95 {
			t.Errorf("replica 3 routing by latency: got %v, want p/b for at least 95 of 100", got)
		}
		if !stop(t, srv) {
			return
		}
		if err := shares[2].Tick(ctx); err == nil {
			t.Errorf("Redis down: the exchange did not fail")
		}
		if v := meters[2].View("p/a"); v.InFlight != 2 {
			t.Errorf("Redis down: got %d in flight on p/a, want the last known 2", v.InFlight)
		}
	})
}

// answering is a provider that answers at once with a text and its end.
type answering struct{}

func (answering) Stream(context.Context, *llm.Request) (llm.Stream, error) {
	return &answer{evs: []llm.Event{{Type: llm.EvStart}, {Type: llm.EvText, Text: "ok"}, {Type: llm.EvDone, Finish: "stop"}}}, nil
}

type answer struct{ evs []llm.Event }

func (a *answer) Recv() (llm.Event, error) {
	if len(a.evs) == 0 {
		return llm.Event{}, io.EOF
	}
	ev := a.evs[0]
	a.evs = a.evs[1:]
	return ev, nil
}

func (a *answer) Close() error { return nil }

func chatRequest() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}}
}
