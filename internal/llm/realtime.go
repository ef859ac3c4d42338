package llm

import "context"

// RealtimeCall is what a Realtime session asks of its upstream (issue 48): the upstream's
// model (an Azure deployment), and the client's OpenAI-Beta header ("": none), which picks
// the beta or the GA shape of the events.
type RealtimeCall struct {
	Model string
	Beta  string
}

// RealtimeConn is one upstream Realtime session: its events, each a JSON text message.
// Read is called by one goroutine at a time; Write and Close may be called concurrently
// with it and with each other. Read returns an error once the session ended: io.EOF when the
// upstream closed it normally. Close ends the session and unblocks Read.
type RealtimeConn interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, event []byte) error
	Close() error
}

// Realtimer is a target that serves Realtime sessions (OpenAI, Azure OpenAI, the simulated
// provider). Realtime returns once the upstream accepted the session: a refusal or a
// connection failure is an *Error with its Kind and Status, free of the gateway's
// credentials, as from Provider.Stream; the chain may then try the next target. The
// connection is the caller's to Close; canceling ctx during the dial aborts it.
type Realtimer interface {
	Realtime(ctx context.Context, call RealtimeCall) (RealtimeConn, error)
}
