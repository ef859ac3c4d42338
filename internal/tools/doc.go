// Package tools runs the gateway's server-side tools in the round loop of a frontend run
// (DESIGN §8): HTTP tools (the gateway POSTs the arguments; the tool answers JSON, or streams
// progress then a result as SSE or NDJSON), the tools of MCP servers (package mcp, named
// server__tool for the model), and simulated tools (in process, for demos). It decides which
// calls of a round the gateway owns (Offer.Owns), runs them one after the other in call
// order, bounds each by its timeout and, while it streams, by its liveness watchdog, relays
// its progress to the client coalesced on its own lane (data-tool-progress, redacted), turns
// any failure into tool-output-error and an error result for the model (never a failed run),
// and measures every invocation (telemetry.Tool).
//
// A Set holds the configured tools for the life of the server; an Offer is what one run's
// alias offers the model, fixed at the run's start. Each invocation reads its tool on one
// goroutine of its own, which the run's goroutine waits for before the next call: nothing
// outlives Offer.Run.
package tools
