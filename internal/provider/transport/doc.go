// Package transport is what the HTTP adapters share below their wire formats: the pooled
// HTTP client and its dialer, the mapping of a call that got no answer to an *llm.Error, the
// kind and wording of a non-2xx answer's error (StatusKind, StatusError), the Retry-After
// header, the body of a streamed answer (drained after a complete answer so that
// the connection is kept, closed otherwise), and the queue that hands out, one per Recv, the
// llm events one upstream event produced.
//
// It decides nothing about any wire and knows nothing of the fallback chain: the attempt's
// connect timeout and its cancel cause reach it through llm (ConnectTimeout, ContextError).
package transport
