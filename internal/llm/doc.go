// Package llm is the provider-neutral vocabulary of the gateway: the request, the events of a
// streamed answer, the stream that yields them, the complete response of a round, and the
// error kinds that drive fallback, HTTP status, metric labels and log levels.
//
// It decides nothing about any provider's wire format: adapters translate into these types and
// nothing downstream knows where an event came from. Standard library only.
package llm
