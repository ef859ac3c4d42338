package fallback_test

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/fallback"
)

func TestFilter(t *testing.T) {
	p := newFake(ok)
	keepB := func(t *fallback.Target) bool { return strings.HasPrefix(t.Name, "b") }
	tests := []struct {
		name  string
		chain fallback.Chain
		want  string // elements as "name:weight|name:weight,..."; "" for nil
	}{
		{"shorthand targets", fallback.Chain{Targets: []fallback.Target{target("a1", p), target("b1", p), target("b2", p)}},
			"b1:0,b2:0"},
		{"group keeps weights", fallback.Chain{Elements: []fallback.Element{
			{Targets: []fallback.Target{target("a1", p)}},
			{Targets: []fallback.Target{target("b1", p), target("a2", p), target("b2", p)}, Weights: []int{3, 2, 1}},
		}}, "b1:3|b2:1"},
		{"none left", fallback.Chain{Targets: []fallback.Target{target("a1", p)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.chain.Alias = "x"
			got := tt.chain.Filter(keepB)
			if tt.want == "" {
				if got != nil {
					t.Fatalf("got %+v, want nil", got)
				}
				return
			}
			if got == nil || got.Alias != "x" {
				t.Fatalf("got %+v, want a copy of alias x", got)
			}
			var els []string
			for _, el := range got.Elements {
				var ms []string
				for i, tg := range el.Targets {
					w := 0
					if el.Weights != nil {
						w = el.Weights[i]
					}
					ms = append(ms, tg.Name+":"+string(rune('0'+w)))
				}
				els = append(els, strings.Join(ms, "|"))
			}
			if s := strings.Join(els, ","); s != tt.want {
				t.Errorf("got %s, want %s", s, tt.want)
			}
		})
	}
	// The original chain is unchanged.
	c := fallback.Chain{Targets: []fallback.Target{target("a1", p), target("b1", p)}}
	c.Filter(keepB)
	if len(c.Targets) != 2 || c.Elements != nil {
		t.Errorf("got %+v, want the original chain unchanged", c)
	}
}
