package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// What a client sees: a bug's text never, a refused credential's upstream words never, and a
// kind's OpenAI type and code where the error sets none.
func TestPublic(t *testing.T) {
	bug := Public(errors.New("dial tcp 10.0.0.7:6379: secret-host"))
	if bug.Kind != Internal || bug.Code != "internal_error" || strings.Contains(bug.Message, "secret") {
		t.Errorf("bug: got %+v, want internal_error with no text of the error", bug)
	}
	auth := Public(fmt.Errorf("round: %w", &Error{Kind: Auth, Target: "oai/gpt", Message: "Incorrect API key provided: sk-abc"}))
	if auth.Code != "upstream_auth_failed" || auth.Type != "server_error" || strings.Contains(auth.Message, "sk-abc") ||
		!strings.HasPrefix(auth.Message, "oai/gpt: ") {
		t.Errorf("auth: got %+v, want the target named and the upstream message dropped", auth)
	}
	rl := Public(&Error{Kind: RateLimited, Message: "slow down"})
	if rl.Type != "rate_limit_error" || rl.Code != "rate_limit_exceeded" || rl.Message != "slow down" {
		t.Errorf("rate limit: got %+v", rl)
	}
	own := Public(&Error{Kind: Invalid, Type: "custom", Code: "mine", Message: "m"})
	if own.Type != "custom" || own.Code != "mine" {
		t.Errorf("own type and code: got %+v, want them kept", own)
	}
}
