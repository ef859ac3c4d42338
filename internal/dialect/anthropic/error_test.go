package anthropic

import (
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestAllOverloaded(t *testing.T) {
	over := llm.Attempt{Status: StatusOverloaded}
	quoted := llm.Attempt{Status: 200, Reason: `midstream: {"type":"overloaded_error"}`}
	other := llm.Attempt{Status: 500, Reason: "api_error"}
	for _, tc := range []struct {
		tries []llm.Attempt
		want  bool
	}{{nil, false}, {[]llm.Attempt{over, quoted}, true}, {[]llm.Attempt{over, other}, false}} {
		if got := AllOverloaded(tc.tries); got != tc.want {
			t.Errorf("AllOverloaded(%+v) = %v, want %v", tc.tries, got, tc.want)
		}
	}
}
