package fallback_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// BenchmarkPick is one request's walk of a group of two targets to its committed stream,
// with and without affinity (in memory), for a request with a session and for one whose
// conversation is its prefix (a 4 KB system prompt): what affinity adds to the request
// path (issue 46: at most 3% of a request's CPU).
func BenchmarkPick(b *testing.B) {
	system := strings.Repeat("You are a careful coding agent. ", 128)
	mk := func(session string) *llm.Request {
		return &llm.Request{Session: session, Messages: []llm.Message{
			{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: system}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "Fix the failing test."}}}}}
	}
	for _, bc := range []struct {
		name    string
		aff     fallback.Affinity
		session string
	}{
		{name: "off"},
		{name: "session", aff: &fallback.AffinityMemory{}, session: "user_1234_account_5678_session_9abc"},
		{name: "prefix", aff: &fallback.AffinityMemory{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := &fallback.Chain{Alias: "agents", Affinity: bc.aff, Health: &fallback.Memory{}, Elements: []fallback.Element{
				{Targets: []fallback.Target{target("p/x", newFake(ok)), target("p/y", newFake(ok))}}}}
			rq := mk(bc.session)
			b.ReportAllocs()
			for b.Loop() {
				s, err := c.Start(rq).Next(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}
