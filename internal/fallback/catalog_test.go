package fallback_test

import (
	"testing"

	"github.com/sluice-gw/sluice/internal/fallback"
)

func TestCatalogFind(t *testing.T) {
	named := func(n string) *fallback.Chain { return &fallback.Chain{Alias: n} }
	chains := map[string]*fallback.Chain{}
	for _, n := range []string{"fast", "claude-*", "claude-*-4-5*", "claude-opus-?", "g[pq]t"} {
		chains[n] = named(n)
	}
	c := fallback.NewCatalog(chains, map[string]fallback.Provider{"openai": &fake{}}, nil, nil, fallback.Timeouts{})
	for model, want := range map[string]string{
		"fast":                     "fast",
		"claude-sonnet-4-5":        "claude-*-4-5*", // more literal characters than claude-*
		"claude-haiku-4-5-2025":    "claude-*-4-5*",
		"claude-haiku-3":           "claude-*",
		"claude-opus-4":            "claude-opus-?", // 12 literal characters against claude-*'s 7
		"gpt":                      "g[pq]t",
		"openai/gpt-4o-mini":       "openai/gpt-4o-mini", // a direct target
		"claude-*":                 "claude-*",           // the pattern's own name is its alias
		"anthropic/claude-3-haiku": "",                   // no such provider
		"openai/":                  "",                   // no model
		"slow":                     "",
	} {
		ch := c.Find(model)
		switch {
		case want == "" && ch != nil:
			t.Errorf("Find(%q) = %q, want none", model, ch.Alias)
		case want != "" && ch == nil:
			t.Errorf("Find(%q) = none, want %q", model, want)
		case want != "" && ch.Alias != want:
			t.Errorf("Find(%q) = %q, want %q", model, ch.Alias, want)
		}
	}
	if ch := c.Find("openai/gpt-4o-mini"); len(ch.Targets) != 1 || ch.Targets[0].Model != "gpt-4o-mini" || !ch.CommitOnReasoning {
		t.Errorf("direct chain = %+v", ch)
	}
}

func TestChainAll(t *testing.T) {
	names := func(c *fallback.Chain) (out []string) {
		for tg := range c.All() {
			out = append(out, tg.Name)
		}
		return out
	}
	flat := &fallback.Chain{Targets: []fallback.Target{{Name: "a"}, {Name: "b"}}}
	grouped := &fallback.Chain{Elements: []fallback.Element{{Targets: []fallback.Target{{Name: "x"}, {Name: "y"}}}, {Targets: []fallback.Target{{Name: "z"}}}}}
	if got := names(flat); len(got) != 2 || got[1] != "b" {
		t.Errorf("flat: %v", got)
	}
	if got := names(grouped); len(got) != 3 || got[0] != "x" || got[2] != "z" {
		t.Errorf("grouped: %v", got)
	}
	for tg := range grouped.All() {
		if tg.Name != "x" {
			t.Fatal("All went on after its loop stopped")
		}
		break
	}
}
