package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Teams made on one replica are seen by the other, changes never lost between them, and a
// name taken or gone is told apart.
func TestTeamsAcrossReplicas(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		ctx := context.Background()
		a, b := replica(t, srv, false, nil).Teams(), replica(t, srv, false, nil).Teams()
		b.CacheTTL = 0
		created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		team := &auth.Team{Name: "search", Models: []string{"default"}, RPM: 30, DailyUSD: 5, CreatedAt: created,
			MCP: &auth.MCPAccess{Servers: []string{"docs"}}}
		if err := a.Create(ctx, team); err != nil {
			t.Fatal(err)
		}
		if err := b.Create(ctx, &auth.Team{Name: "search"}); !errors.Is(err, auth.ErrTeamExists) {
			t.Fatalf("got %v, want ErrTeamExists", err)
		}
		got, err := b.Get(ctx, "search")
		if err != nil || got.RPM != 30 || got.DailyUSD != 5 || got.Models[0] != "default" || got.MCP.Servers[0] != "docs" ||
			!got.CreatedAt.Equal(created) {
			t.Fatalf("got %+v, %v, want the team a created", got, err)
		}
		// 20 concurrent increments from both replicas: none lost (compare and set).
		var wg sync.WaitGroup
		for i := range 20 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				if _, err := s.Update(ctx, "search", func(t *auth.Team) error { t.TPM++; t.Name = "renamed"; return nil }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got, _ := b.Get(ctx, "search"); got.TPM != 20 || got.Name != "search" || !got.CreatedAt.Equal(created) {
			t.Errorf("got tpm %d, name %q, want 20 increments and the name kept", got.TPM, got.Name)
		}
		if err := a.Create(ctx, &auth.Team{Name: "infra"}); err != nil {
			t.Fatal(err)
		}
		list, err := b.List(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "infra" || list[1].Name != "search" {
			t.Fatalf("got %v, %v, want infra then search", list, err)
		}
		if err := b.Delete(ctx, "search"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Get(ctx, "search"); !errors.Is(err, auth.ErrNoTeam) {
			t.Errorf("got %v, want ErrNoTeam after the deletion", err)
		}
		if err := a.Delete(ctx, "search"); !errors.Is(err, auth.ErrNoTeam) {
			t.Errorf("got %v, want ErrNoTeam for a second deletion", err)
		}
		if _, err := a.Update(ctx, "search", func(*auth.Team) error { return nil }); !errors.Is(err, auth.ErrNoTeam) {
			t.Errorf("got %v, want ErrNoTeam for an update of a deleted team", err)
		}
	})
}

// Release gives back a reservation's request and tokens in Redis (a team's, after its
// key's limit refused), on a node and on a cluster.
func TestLimiterRelease(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		ctx := context.Background()
		l := replica(t, srv, false, nil).Limiter()
		a := limit.Ask{Key: "team:search", ID: "1", Requests: limit.Rule{Limit: 1, Window: time.Hour},
			Tokens: limit.Rule{Limit: 100, Window: time.Hour}, Cost: 100}
		if r, err := l.Reserve(ctx, a); err != nil || !r.OK {
			t.Fatalf("got %+v, %v, want the first admitted", r, err)
		}
		a.ID = "2"
		if r, _ := l.Reserve(ctx, a); r.OK {
			t.Fatal("got the second admitted over the limit")
		}
		if err := l.Release(ctx, "team:search", "1"); err != nil {
			t.Fatal(err)
		}
		if r, err := l.Reserve(ctx, a); err != nil || !r.OK || r.Tokens.Remaining != 0 {
			t.Fatalf("got %+v, %v after the release, want admitted", r, err)
		}
	})
}

// The account's rows carry the team, and rows without one keep the older field format, so
// the days written before teams read alike; a report groups by team.
func TestUsageTeams(t *testing.T) {
	srv := redistest.Start(t)
	u := replica(t, srv, false, nil).Usage()
	ctx := context.Background()
	day := "2026-06-01"
	for _, l := range []usage.Labels{{Key: "k1", Alias: "default", Team: "search"}, {Key: "k2", Alias: "default", Team: "search"},
		{Key: "k3", Alias: "default"}} {
		if err := u.Add(ctx, day, l, usage.Counts{Requests: 1, CostNano: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if dump := strings.Join(srv.Dump(t), "\n"); !strings.Contains(dump, "k3\x1fdefault\x1f\x1frequests") {
		t.Errorf("got Redis:\n%q\nwant the row without a team in the older format", dump)
	}
	q := usage.Query{From: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), GroupBy: usage.ByTeam}
	lines, total, err := usage.Report(ctx, u, q)
	if err != nil || len(lines) != 2 || lines[0].Name != "" || lines[0].Requests != 1 || lines[1].Name != "search" ||
		lines[1].Requests != 2 || lines[1].CostNano != 10 || total.Requests != 3 {
		t.Fatalf("got %+v, %+v, %v, want the keys without a team, then search with 2 requests", lines, total, err)
	}
	q.Team = "search"
	if _, total, _ := usage.Report(ctx, u, q); total.Requests != 2 {
		t.Errorf("got %d requests of team search, want 2", total.Requests)
	}
}
