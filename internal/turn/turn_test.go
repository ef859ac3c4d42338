package turn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/sim"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/turn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start walks an alias over the mock's scripts, in process, to its first commit.
func start(t *testing.T, scripts ...string) (*fallback.Run, *fallback.Stream, *llm.Request) {
	t.Helper()
	return startCtx(t, context.Background(), scripts...)
}

func startCtx(t *testing.T, ctx context.Context, scripts ...string) (*fallback.Run, *fallback.Stream, *llm.Request) {
	t.Helper()
	p, err := sim.New("sim", "")
	if err != nil {
		t.Fatal(err)
	}
	ch := &fallback.Chain{Alias: "a", CommitOnReasoning: true}
	for _, s := range scripts {
		ch.Targets = append(ch.Targets, fallback.Target{Name: "sim/" + s, Model: s, Provider: p})
	}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}}
	run := ch.Start(req)
	st, err := run.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return run, st, req
}

// client records what a round did to it; its sink keeps the text it was given.
type client struct {
	serving  []string
	opens    int
	restarts []string
	text     strings.Builder
	failOpen bool
}

func (c *client) Serving(st *fallback.Stream) { c.serving = append(c.serving, st.Target) }
func (c *client) Open(*fallback.Stream) (relay.Sink, error) {
	c.opens++
	if c.failOpen {
		return nil, errors.New("write: broken pipe")
	}
	c.text.Reset() // an abandoned attempt's output is not the answer
	return c, nil
}
func (c *client) Relayed() bool         { return false }
func (c *client) Restart(failed string) { c.restarts = append(c.restarts, failed) }
func (c *client) Event(ev *llm.Event) error {
	if ev.Type == llm.EvText {
		c.text.WriteString(ev.Text)
	}
	return nil
}

type meter struct{ rounds, failed int }

func (m *meter) Round(_, _ string, _ *llm.Response, err error) {
	m.rounds++
	if err != nil {
		m.failed++
	}
}

func output(t *testing.T, s guard.Spec) guard.Set {
	t.Helper()
	s.Stage = guard.Output
	g, err := guard.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return guard.Set{g}
}

const cut = "text?len=80&fail=cut&after=3"

func TestRoundFailure(t *testing.T) {
	tests := []struct {
		name     string
		mode     turn.Mode
		restart  bool
		wantKind llm.Kind
		wantCode string
		served   []string // Serving's calls
		restarts []string
	}{
		// Live: the client saw part of the answer, so the chain cannot fall back: the in-band
		// error names the target and its kind's code.
		{"live", turn.Live, false, llm.Truncated, "upstream_truncated", []string{"sim/" + cut}, nil},
		// Live with the restart policy: the client is told to drop, the next target serves.
		{"live restart", turn.Live, true, llm.KindNone, "", []string{"sim/" + cut, "sim/echo"}, []string{"sim/" + cut}},
		// Whole and held: the client saw nothing, the next target serves.
		{"whole", turn.Whole, false, llm.KindNone, "", []string{"sim/" + cut, "sim/echo"}, nil},
		{"held", turn.Held, false, llm.KindNone, "", []string{"sim/" + cut, "sim/echo"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, st, req := start(t, cut, "echo")
			c, m := &client{}, &meter{}
			tr := &turn.Turn{Run: run, Mode: tt.mode, Request: req, Meter: m, Restart: tt.restart}
			resp, st, err := tr.Round(context.Background(), c, st)
			if llm.KindOf(err) != tt.wantKind {
				t.Fatalf("got %v (%v), want kind %v", llm.KindOf(err), err, tt.wantKind)
			}
			if strings.Join(c.serving, ",") != strings.Join(tt.served, ",") || strings.Join(c.restarts, ",") != strings.Join(tt.restarts, ",") {
				t.Errorf("served %v, restarts %v; want %v, %v", c.serving, c.restarts, tt.served, tt.restarts)
			}
			if m.rounds != len(tt.served) || m.failed != 1 {
				t.Errorf("metered %d relays (%d failed), want %d (1)", m.rounds, m.failed, len(tt.served))
			}
			if err != nil {
				var le *llm.Error
				if !errors.As(err, &le) || le.Code != tt.wantCode || !strings.HasPrefix(le.Message, "sim/"+cut+" failed after the answer started") {
					t.Errorf("got %#v, want code %s from the cut target", le, tt.wantCode)
				}
				if len(run.Attempts) != 1 || run.Attempts[0].Kind == llm.KindNone {
					t.Errorf("attempts %+v: the failed target must have its verdict", run.Attempts)
				}
				return
			}
			defer st.Close()
			if st.Target != "sim/echo" || resp.Choices[0].Text != "hi" || c.text.String() != "hi" {
				t.Errorf("served by %s with %q (client got %q), want sim/echo with hi", st.Target, resp.Choices[0].Text, c.text.String())
			}
		})
	}
}

// A held round that a guardrail refuses never reaches the client, and is not the target's
// fault: no fallback, no verdict against it.
func TestHeldRefusalIsNeverSeen(t *testing.T) {
	run, st, req := start(t, "echo", "text?len=20")
	c := &client{}
	tr := &turn.Turn{Run: run, Mode: turn.Held, Request: req, Guards: output(t, guard.Spec{Name: "no-hi", Kind: "terms", Terms: []string{"hi"}})}
	resp, st, err := tr.Round(context.Background(), c, st)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.Refused || le.Code != "guardrail_refused" {
		t.Fatalf("got %v, want guardrail_refused", err)
	}
	if c.opens != 0 || c.text.Len() != 0 {
		t.Errorf("the client was opened %d times and got %q: a held refusal must not reach it", c.opens, c.text.String())
	}
	if resp == nil || st == nil || st.Target != "sim/echo" || len(run.Attempts) != 1 {
		t.Errorf("resp %v, stream %v, attempts %+v: want the refused round, on sim/echo only", resp, st, run.Attempts)
	}
}

// A retry guardrail restarts a locked round (a frontend run) on the next target; without
// Retry it refuses like any other.
func TestRetryGuardrail(t *testing.T) {
	for _, retry := range []bool{true, false} {
		run, st, req := start(t, "echo", "text?len=20")
		c := &client{}
		tr := &turn.Turn{Run: run, Mode: turn.Live, Request: req, Retry: retry, Locked: true,
			Guards: output(t, guard.Spec{Name: "no-hi", Kind: "terms", Terms: []string{"hi"}, Action: "retry", Mode: "stream"})}
		_, st, err := tr.Round(context.Background(), c, st)
		if !retry {
			if llm.KindOf(err) != llm.Refused || len(c.restarts) != 0 {
				t.Errorf("without Retry: got %v, restarts %v; want a refusal", err, c.restarts)
			}
			continue
		}
		if err != nil {
			t.Fatalf("with Retry: %v", err)
		}
		st.Close()
		if st.Target != "sim/text?len=20" || len(c.restarts) != 1 || c.restarts[0] != "sim/echo" {
			t.Errorf("served by %s, restarts %v; want the second target after one restart", st.Target, c.restarts)
		}
	}
}

// A locked held round (a run's later round) never falls back: it fails in-band.
func TestLockedHeldFails(t *testing.T) {
	run, st, req := start(t, cut, "echo")
	tr := &turn.Turn{Run: run, Mode: turn.Held, Request: req, Locked: true}
	_, _, err := tr.Round(context.Background(), &client{}, st)
	if llm.KindOf(err) != llm.Truncated || len(run.Attempts) != 1 {
		t.Errorf("got %v after %d attempts, want the truncated target's midstream error", err, len(run.Attempts))
	}
}

// A client that left is its own failure: the target is not blamed and nothing falls back.
func TestClientGone(t *testing.T) {
	run, st, req := start(t, "echo", "text?len=20")
	c := &client{failOpen: true}
	tr := &turn.Turn{Run: run, Mode: turn.Whole, Request: req}
	_, _, err := tr.Round(context.Background(), c, st)
	if llm.KindOf(err) != llm.Canceled || len(run.Attempts) != 1 || run.Attempts[0].Kind != llm.KindNone {
		t.Errorf("got %v, attempts %+v; want Canceled on the first target, not blamed", err, run.Attempts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run, st, req = startCtx(t, ctx, "text?len=20&chunk=2&delay=50ms", "echo")
	cancel()
	tr = &turn.Turn{Run: run, Mode: turn.Whole, Request: req}
	if _, _, err := tr.Round(ctx, &client{}, st); llm.KindOf(err) != llm.Canceled || len(run.Attempts) != 1 {
		t.Errorf("got %v after %d attempts, want Canceled and no fallback", err, len(run.Attempts))
	}
}

// TestOutliving: a round whose client left before the answer still runs to its end, into
// the sink it was given instead, and is not Canceled.
func TestOutliving(t *testing.T) {
	run, st, req := start(t, "text?len=20")
	gone := &client{failOpen: true}
	var instead client
	tr := &turn.Turn{Run: run, Mode: turn.Live, Request: req}
	resp, _, err := tr.Round(context.Background(), turn.Outliving(gone, func(*fallback.Stream) relay.Sink { return &instead }), st)
	if err != nil || resp == nil || instead.text.Len() != 20 || gone.opens != 1 {
		t.Fatalf("got %v, %d bytes instead, %d opens; want the whole answer", err, instead.text.Len(), gone.opens)
	}
	run, st, req = start(t, "text?len=20")
	tr = &turn.Turn{Run: run, Mode: turn.Live, Request: req}
	if _, _, err := tr.Round(context.Background(), gone, st); llm.KindOf(err) != llm.Canceled {
		t.Errorf("without Outliving: %v, want Canceled", err)
	}
}
