package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// kind starts the calls of one tool.
type kind interface {
	// start sends the call; alive is called whenever the tool shows a sign of life (bytes of
	// its answer). Canceling ctx ends the call, a Recv in progress included.
	start(ctx context.Context, args json.RawMessage, callID string, alive func()) (call, error)
}

// call is one invocation in flight, pull-style and single-use: Recv returns progress, then
// the result, then io.EOF; any error is sticky. Close releases what is left (and tells an MCP
// server that a call ended early). Not safe for concurrent use.
type call interface {
	Recv() (event, error)
	// Streaming reports whether the answer streams events (watched for liveness) rather
	// than arriving whole.
	Streaming() bool
	Close() error
}

// event is a progress report (progress set) or the result (output: JSON).
type event struct {
	progress *Progress
	output   json.RawMessage
}

// Progress is how far a call got, as the tool said; every field is optional.
type Progress struct {
	Done    *float64 `json:"done,omitempty"`
	Total   *float64 `json:"total,omitempty"`
	Message string   `json:"message,omitempty"`
	Status  string   `json:"status,omitempty"`
}

// failure is an error the tool itself reported (an error event, an HTTP error status, an
// MCP error result): its message is the tool's, shown to the client (redacted) and the model.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func failed(msg string) error { return &failure{msg: msg} }

// Errors of the watchdogs, as the causes of a call's context.
var (
	errTimeout  = errors.New("tool timeout")
	errLiveness = errors.New("tool liveness")
)

// Caps on what a tool may send: a whole answer, one streamed event, and the text fields of
// progress (progress is small: DESIGN §8).
const (
	maxOutput  = 1 << 20
	maxEvent   = 1 << 20
	maxMessage = 256
	maxStatus  = 32
)
