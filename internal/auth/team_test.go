package auth

import (
	"context"
	"errors"
	"testing"
)

func TestTeams(t *testing.T) {
	ctx := context.Background()
	keys := NewKeys([]*Key{{ID: "cfg_1", Name: "bot", Hash: "h1", Team: "search"}}, &Memory{})
	ts := NewTeams([]*Team{{Name: "search", Models: []string{"default"}}}, &TeamMemory{})
	if err := ts.Create(ctx, &Team{Name: "search"}); !errors.Is(err, ErrTeamExists) {
		t.Errorf("got %v, want ErrTeamExists for the file's name", err)
	}
	if _, err := ts.Update(ctx, "search", func(*Team) error { return nil }); !errors.Is(err, ErrTeamStatic) {
		t.Errorf("got %v, want ErrTeamStatic", err)
	}
	if err := ts.Delete(ctx, "search", keys); !errors.Is(err, ErrTeamStatic) {
		t.Errorf("got %v, want ErrTeamStatic", err)
	}
	if err := ts.Create(ctx, &Team{Name: "infra", Models: []string{"*"}, RPM: 5}); err != nil {
		t.Fatal(err)
	}
	if err := ts.Create(ctx, &Team{Name: "infra"}); !errors.Is(err, ErrTeamExists) {
		t.Errorf("got %v, want ErrTeamExists", err)
	}
	got, err := ts.Update(ctx, "infra", func(t *Team) error { t.RPM, t.Name = 7, "other"; return nil })
	if err != nil || got.RPM != 7 || got.Name != "infra" {
		t.Fatalf("got %+v, %v, want rpm 7 and the name kept", got, err)
	}
	list, _ := ts.List(ctx)
	if len(list) != 2 || list[0].Name != "search" || !list[0].Static || list[1].Name != "infra" || list[1].Static {
		t.Fatalf("got %+v, want the file's search then the stored infra", list)
	}
	// A team with keys cannot go; once its key moved away it can.
	if err := keys.Create(ctx, &Key{ID: "key_1", Hash: "h2", Team: "infra"}); err != nil {
		t.Fatal(err)
	}
	if err := ts.Delete(ctx, "infra", keys); !errors.Is(err, ErrTeamInUse) {
		t.Errorf("got %v, want ErrTeamInUse", err)
	}
	if _, err := keys.Update(ctx, "key_1", func(k *Key) error { k.Team = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := ts.Delete(ctx, "infra", keys); err != nil {
		t.Errorf("got %v, want the deletion of a team without keys", err)
	}
	if _, err := ts.Get(ctx, "infra"); !errors.Is(err, ErrNoTeam) {
		t.Errorf("got %v, want ErrNoTeam", err)
	}
	if err := ts.Delete(ctx, "infra", keys); !errors.Is(err, ErrNoTeam) {
		t.Errorf("got %v, want ErrNoTeam", err)
	}
}

func TestTeamAllows(t *testing.T) {
	tm := &Team{Models: []string{"default", "claude-*"}}
	for model, want := range map[string]bool{"default": true, "claude-sonnet-4-5": true, "fast": false} {
		if got := tm.Allows(model); got != want {
			t.Errorf("%s: got %v, want %v", model, got, want)
		}
	}
	if !(&Team{}).AllowsMCP("docs", "docs__search") {
		t.Errorf("got a team without mcp restricting, want no restriction")
	}
	m := &Team{MCP: &MCPAccess{Servers: []string{"docs"}, Tools: []string{"docs__search*"}}}
	if !m.AllowsMCP("docs", "docs__search_all") || m.AllowsMCP("docs", "docs__delete") || m.AllowsMCP("web", "web__search") {
		t.Errorf("got %+v allowing wrongly, want docs__search* of docs only", m.MCP)
	}
	if ValidTeamName("Search") || ValidTeamName("") || ValidTeamName("a/b") || !ValidTeamName("search-1.eu_w") {
		t.Errorf("got team names misjudged")
	}
}
