package llm

import (
	"encoding/json"
	"time"
)

// EventType is the kind of an Event. The set is closed: adapters map every wire event onto
// one of these or drop it.
type EventType uint8

const (
	// EvStart is preamble: the upstream opened its answer (a role-only chunk,
	// response.created, message_start). It carries the upstream id and model, never content,
	// and never commits an attempt.
	EvStart EventType = iota + 1
	// EvText is a delta of answer text.
	EvText
	// EvRefusal is a delta of refusal text.
	EvRefusal
	// EvReasoning is a delta of reasoning text, or opaque reasoning content (Encrypted).
	EvReasoning
	// EvToolCall is a fragment of a tool call: Tool.Index identifies the call within the
	// choice; ID and Name arrive on the first fragment, Args is a piece of the JSON text.
	EvToolCall
	// EvLogprobs carries the raw logprobs object of the upstream chunk, passed through.
	EvLogprobs
	// EvUsage carries the token usage of the answer.
	EvUsage
	// EvDone ends a choice with its finish reason.
	EvDone
	// EvItem is a whole output item the gateway does not model (a Responses web_search_call,
	// mcp_call, local_shell_call, ...), raw JSON in Raw, from a Responses upstream. It takes
	// its place among the choice's tool calls (Tool.Index) and is released with them; only a
	// Responses client gets it, as it came.
	EvItem
	// EvData is a piece of an answer passed through as its upstream sent it (speech audio,
	// a transcription's text, an edited image's JSON: issue 48): Raw holds its bytes, and
	// the first piece's Field the answer's media type. It commits, even when empty.
	EvData
)

var evNames = [...]string{"", "start", "text", "refusal", "reasoning", "tool_call", "logprobs", "usage", "done", "item", "data"}

func (t EventType) String() string {
	if int(t) < len(evNames) {
		return evNames[t]
	}
	return "unknown"
}

// Event is one provider-neutral stream event. Only the fields of its Type are set.
type Event struct {
	Type EventType
	// Choice is the index of the choice the delta belongs to (n > 1).
	Choice int
	// Text is the delta of EvText, EvRefusal and EvReasoning.
	Text string
	// Field names the wire field reasoning came in ("reasoning", "reasoning_content"), so an
	// OpenAI-compatible client gets it back in the same field.
	Field string
	// Encrypted is opaque reasoning content (a signature, encrypted_content), carried through.
	Encrypted string
	// Redacted says Encrypted is a redacted block's data (Anthropic redacted_thinking,
	// Bedrock redactedContent), not the signature of a thinking block: a Claude thinking
	// block may have no text and a signature (display "omitted"), and must go back to the
	// client as a thinking block, not a redacted one.
	Redacted bool
	Tool     ToolDelta
	// Raw is the raw JSON of EvLogprobs and EvItem, the bytes of EvData.
	Raw json.RawMessage
	// Progress are an EvItem's own progress events as its upstream sent them, raw, in order
	// (response.web_search_call.in_progress, .searching, .completed, ...): a Responses
	// client gets them between the item's added and done, renumbered; others ignore them.
	Progress []json.RawMessage
	// Usage is set on EvUsage.
	Usage *Usage
	// Finish is the finish reason of EvDone, in Chat Completions terms
	// (stop, length, tool_calls, content_filter).
	Finish string
	// Stop is the upstream's own stop reason on EvDone where its wire says more than Finish
	// (Anthropic's stop_reason: stop_sequence, pause_turn, ...), and StopSequence the stop
	// sequence that matched; a client of the same wire gets them back as they came.
	Stop, StopSequence string
	// ID and Model are the upstream's names for its answer, set on EvStart. ID is also the
	// provider's id of the reasoning block an opaque EvReasoning (Encrypted) ends.
	ID    string
	Model string
}

// ToolDelta is a fragment of a tool call.
type ToolDelta struct {
	Index int
	ID    string
	Name  string
	Args  string
}

// Healthy reports whether an event proves the attempt is answering: content, a tool call, or
// a well-formed end. Reasoning counts unless the alias says otherwise, which the caller
// decides; Healthy reports it as healthy.
func (e *Event) Healthy() bool {
	switch e.Type {
	case EvText, EvRefusal, EvReasoning:
		return e.Text != "" || e.Encrypted != ""
	case EvToolCall, EvItem:
		return true
	case EvDone, EvData:
		return true
	}
	return false
}

// Usage is token usage as the provider reported it, or as the gateway estimated it.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CachedTokens are prompt tokens read from the provider's cache; CacheWriteTokens were
	// written to it (Anthropic reports both), CacheWrite1hTokens of them with the 1-hour TTL
	// (the rest with 5 minutes). All are part of PromptTokens.
	CachedTokens       int
	CacheWriteTokens   int
	CacheWrite1hTokens int
	ReasoningTokens    int
	// CacheDropped counts the client's cache breakpoints the adapter left out: over the
	// provider's limit (4 for Anthropic and Bedrock), or on a block the target cannot mark.
	CacheDropped int
	// Estimated is set when the stream ended without a usage report.
	Estimated bool
	// Units are what a call is billed per besides tokens: the images generated, a rerank's
	// search units (issue 48). Priced at usage.Price.Unit.
	Units int
}

// Plus is u and o together: the usage of several rounds or attempts; estimated if either is.
func (u Usage) Plus(o Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + o.PromptTokens, CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens: u.TotalTokens + o.TotalTokens, CachedTokens: u.CachedTokens + o.CachedTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens, CacheWrite1hTokens: u.CacheWrite1hTokens + o.CacheWrite1hTokens,
		ReasoningTokens: u.ReasoningTokens + o.ReasoningTokens, CacheDropped: u.CacheDropped + o.CacheDropped,
		Estimated: u.Estimated || o.Estimated, Units: u.Units + o.Units}
}

// Stream is an upstream answer, pull-style and single-use. Recv returns the next event, or
// io.EOF after a complete answer; any other error is sticky and every later Recv returns it.
// A stream that ends before its finish, or whose last event is cut, ends with a Truncated
// *Error, never io.EOF. Close releases the connection and unblocks a Recv in progress; it is
// safe to call more than once. Not safe for concurrent use except Close.
type Stream interface {
	Recv() (Event, error)
	Close() error
}

// Waiter is a Stream that knows when its Recv is about to wait for the upstream: from
// BeforeWait on, it calls f first every time (and never after Close). The server flushes
// what it wrote to the client then, so the events that came together leave in one write and
// none is kept back while the gateway waits.
type Waiter interface {
	BeforeWait(f func())
}

// Choice is the complete answer of one choice.
type Choice struct {
	Index     int
	Text      string
	Refusal   string
	Reasoning string
	// ReasoningField is the wire field reasoning arrived in, if any.
	ReasoningField string
	// Opaque are the opaque ends of reasoning blocks (signatures, encrypted content), in
	// order, with the provider's block id when it gave one.
	Opaque    []Reasoning
	ToolCalls []ToolCall
	// Logprobs are the raw logprobs objects of the choice's chunks, in order.
	Logprobs []json.RawMessage
	Finish   string
	// Stop and StopSequence are the upstream's own stop reason and matched sequence (Event).
	Stop, StopSequence string
}

// Attempt records one call of one target, for telemetry and the exhausted-chain error.
type Attempt struct {
	Target     string
	Start      time.Time
	Kind       Kind // KindNone when it served
	Status     int  // upstream HTTP status, 0 when none came
	Committed  bool
	FirstEvent time.Duration
	Reason     string // short, secret-free
	// End is when the attempt ended: its failure, or its answer's clean end; zero while it
	// runs or when it was abandoned (telemetry then takes the end of the request).
	End time.Time
}

// Response is the complete response of a round.
type Response struct {
	ID      string
	Model   string
	Choices []Choice
	Usage   Usage
	// Target is the served target ("provider/model").
	Target   string
	Attempts []Attempt
	// FirstEvent is the time from the round's start to its first healthy upstream event;
	// FirstText to the first text released to the sink.
	FirstEvent time.Duration
	FirstText  time.Duration
	// Redactions counts the masks applied to the round's text, per detector.
	Redactions map[string]int
	// Affinity is what conversation affinity did for the round: "" (none), "new" (first
	// turn, or its target was forgotten), "kept" (the conversation's target served),
	// "moved" (that target was cooling or failed, and another took the conversation).
	Affinity string
}

// Choice returns the choice with index i, adding it (and any before it) if needed.
func (r *Response) Choice(i int) *Choice {
	for len(r.Choices) <= i {
		r.Choices = append(r.Choices, Choice{Index: len(r.Choices)})
	}
	return &r.Choices[i]
}
