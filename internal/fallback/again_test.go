package fallback_test

import (
	"context"
	"testing"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Later rounds stay on the committed target, with their own request, and never fall back.
func TestAgainStaysOnTarget(t *testing.T) {
	a, b := newFake(ok, ok, script{open: err500}), newFake(ok)
	c := &fallback.Chain{Alias: "x", CommitOnReasoning: true, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	run := c.Start(req())
	s, err := run.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = readAll(t, s)
	s.Close()
	r2 := req()
	r2.Messages = append(r2.Messages, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "x"}}})
	s2, err := run.Again(context.Background(), s, r2)
	if err != nil {
		t.Fatalf("round 2: got %v, want a's answer", err)
	}
	if s2.Target != "p/a" {
		t.Errorf("round 2: got target %s, want p/a", s2.Target)
	}
	_, _ = readAll(t, s2)
	s2.Close()
	if _, err := run.Again(context.Background(), s2, r2); llm.KindOf(err) != llm.Unavailable {
		t.Errorf("round 3: got %v, want a's 500 returned, not b", err)
	}
	if a.Calls() != 3 || b.Calls() != 0 {
		t.Errorf("got %d calls of a and %d of b, want 3 and 0", a.Calls(), b.Calls())
	}
	if len(run.Attempts) != 3 {
		t.Errorf("got %d attempts, want 3", len(run.Attempts))
	}
}

// Restart walks on after the element that served, with the new request.
func TestRestartWalksOn(t *testing.T) {
	a, b := newFake(script{events: []llm.Event{evRole, evText}, end: errInband}), newFake(ok)
	c := &fallback.Chain{Alias: "x", CommitOnReasoning: true, Targets: []fallback.Target{target("p/a", a), target("p/b", b)}}
	run := c.Start(req())
	s, err := run.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, s)
	run.Fail(s, err)
	s.Close()
	if !run.Left() {
		t.Fatalf("got nothing left, want p/b")
	}
	s, err = run.Restart(context.Background(), req())
	if err != nil || s.Target != "p/b" {
		t.Fatalf("got %v, want p/b to serve", err)
	}
	_, _ = readAll(t, s)
	s.Close()
	if run.Left() {
		t.Errorf("got elements left after the last, want none")
	}
}
