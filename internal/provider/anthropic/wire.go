package anthropic

import (
	"fmt"

	"github.com/sluice-gw/sluice/internal/llm"
)

// invalid is the error for a request the adapter cannot translate because it is wrong (a
// malformed image URL, arguments that are not JSON): 400, nothing sent.
func invalid(param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Param: param,
		Message: "anthropic: " + fmt.Sprintf(format, args...)}
}

// unsupported is the error for a well-formed request that asks for what Anthropic does not
// have (n > 1, logprobs): nothing is sent, and the chain tries a target that may have it.
func unsupported(param, format string, args ...any) *llm.Error {
	e := invalid(param, format, args...)
	e.Kind = llm.Unsupported
	return e
}
