// Package telemetry decides what the gateway tells its operators about each request
// (DESIGN §7): the access log line (log/slog), OpenTelemetry spans and metrics with the GenAI
// semantic conventions, and the per-minute statistics of /admin/stats. The time to first
// token is measured as a reader waits for it: from the request's arrival to the first text
// released to the client. It never records a key, and records a prompt or a completion only
// when telemetry.capture_content says so.
//
// Only Setup (setup.go) touches the OpenTelemetry SDK and exporters; the rest uses the API,
// which is a no-op until Setup runs, so tests need no setup. Metric labels are bounded:
// configured names and enums, never a request, key or user id.
package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Access is what one request's log line says.
type Access struct {
	// ID is the request id, the X-Request-Id the client got: its own when it sent a valid
	// one, else Record. Any number of requests may share it (RequestIDs).
	ID string
	// Record is the gateway's own id of the request, unique: its record's in the request log
	// (issue 47).
	Record   string
	Method   string
	Path     string
	Status   int
	Duration time.Duration
	Model    string // what the client asked for: an alias or provider/model
	Target   string // what served it
	Attempts int
	Stream   bool
	Kind     llm.Kind // the outcome: KindNone when it served
	// FirstEvent is the time to the first healthy upstream event, FirstText to the first text
	// released to the client (what a reader waits for); zero when there was none.
	FirstEvent, FirstText time.Duration
	Redactions            int // masks applied to the answer
	// KeyID and KeyName name the caller's virtual key (never the key itself); empty when auth
	// is off or the caller had no valid key.
	KeyID, KeyName string
	// Team is the key's team (issue 37), for the request log; "" for none.
	Team string
	// Usage is the answer's token usage, set by the handler that knows it; nil otherwise. The
	// rate limiter reconciles its token reservation with it.
	Usage *Usage
	// CostUSD is the answer's cost from the price table; 0 when unknown.
	CostUSD float64
	// SavedUSD is what the provider's prompt cache saved of that cost (usage.Saved;
	// negative when the request wrote more cache than it read), for the request log (issue 46).
	SavedUSD float64
	// Cache is what the response cache did: hit, miss or bypass; empty when the alias does
	// not cache.
	Cache string

	// Start is when the request arrived: the origin of every duration above.
	Start time.Time
	// Tries are the chain's attempts, in order (fallback.Run.Attempts), for the attempt spans.
	Tries []llm.Attempt
	// Request is the decoded request and Response the last round's complete answer; nil when
	// there was none. Telemetry reads them for span attributes (and content, when captured).
	Request  *llm.Request
	Response *llm.Response
	// Masks counts the masks applied to the answer per detector (Redactions is their sum).
	Masks map[string]int
	// Overhead is the time spent outside calls to providers; set by Request.End.
	Overhead time.Duration
	// Tools counts the server-side tool invocations made while the request was served,
	// ToolErrors those that did not answer a result, ToolTime their total duration; set by
	// Request.End (tool.go).
	Tools, ToolErrors int
	ToolTime          time.Duration

	// What the request log keeps beyond the access line (DESIGN §6, issue 33): the route's
	// wire (dialect.API.Name; "" off the route table), the alias the model resolved to, the
	// caller's user agent, the trace id ("" with no trace), the public text of the error the
	// client got, the key's metadata, and whether the content is captured ("content") or
	// only the metadata.
	Wire, Alias, UserAgent, TraceID, Error string
	KeyMeta                                map[string]string
	Capture                                string
	// Verdicts and Calls are the guardrails' verdicts and the tool invocations made while the
	// request was served, in order (at most maxListed each); set by Request.End.
	Verdicts []Verdict
	Calls    []ToolCall
	// Shadow marks the record of a shadow call (package shadow, issue 49), made after the
	// request ID names was answered; Similarity is its answer's similarity to the client's.
	Shadow     bool
	Similarity float64
	// Turns are the responses of a Realtime session, in order (package live, issue 48).
	Turns []Turn
}

// Turn is one response of a Realtime session: when it began and ended, and its usage.
type Turn struct {
	Start, End time.Time
	Usage      llm.Usage
}

// Verdict is one guardrail's verdict on the request: its configured name, the stage it
// judged (input, output) and what it decided (VerdictPass, VerdictBlock, VerdictRetry).
type Verdict struct{ Name, Stage, Verdict string }

// ToolCall is one server-side tool invocation: what the model called, the configured tool
// or MCP server that served it, how long it took and its outcome (ToolOK, ...).
type ToolCall struct {
	Name, Server string
	Duration     time.Duration
	Outcome      string
}

// ErrorText is the public text of err, what a client's error body says: its message, else
// its kind.
func ErrorText(err error) string {
	var le *llm.Error
	if errors.As(err, &le) && le.Message != "" {
		return le.Message
	}
	return llm.KindOf(err).String()
}

// Cached reports whether the answer came from the response cache, stored or coalesced
// (cache.Hit, cache.Coalesced): no provider was called for it.
func (a *Access) Cached() bool { return a.Cache == "hit" || a.Cache == "coalesced" }

// Round records a round's complete response (its Target, Attempts and FirstEvent set): what
// a reader waited for (the request's first text: a later round's does not replace it), its
// usage (the limiter reconciles its token reservation with it), the attempts and the
// response for the spans, and the masks applied to the answer.
func (a *Access) Round(resp *llm.Response) {
	if a.FirstText == 0 {
		a.FirstEvent, a.FirstText = resp.FirstEvent, resp.FirstText
	}
	a.Usage = UsageOf(resp.Usage)
	a.Tries, a.Response = resp.Attempts, resp
	for det, n := range resp.Redactions {
		a.Redactions += n
		if a.Masks == nil {
			a.Masks = map[string]int{}
		}
		a.Masks[det] += n
	}
}

// UsageOf is u as the access record keeps it.
func UsageOf(u llm.Usage) *Usage {
	return &Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Total: u.TotalTokens, Estimated: u.Estimated,
		Cached: u.CachedTokens, CacheWrite: u.CacheWriteTokens, CacheWrite1h: u.CacheWrite1hTokens, Reasoning: u.ReasoningTokens,
		CacheDropped: u.CacheDropped}
}

// Usage is the token usage of one answer.
type Usage struct {
	Prompt, Completion, Total int
	Estimated                 bool // the stream ended without a usage report
	// Cached are prompt tokens read from the provider's cache, CacheWrite those written to it
	// (CacheWrite1h of them with the 1-hour lifetime); Reasoning, completion tokens spent
	// thinking.
	Cached, CacheWrite, CacheWrite1h, Reasoning int
	// CacheDropped counts the client's cache breakpoints the adapter left out, for the
	// request log (issue 46).
	CacheDropped int
}

// LogAccess writes the access line at the level its outcome's kind says (Level).
func LogAccess(ctx context.Context, log *slog.Logger, a *Access) {
	lvl := Level(a.Kind, a.Status)
	if !log.Enabled(ctx, lvl) {
		return
	}
	if h, ok := log.Handler().(AccessHandler); ok {
		h.HandleAccess(ctx, lvl, a, nil)
		return
	}
	log.Handler().Handle(ctx, AccessRecord(ctx, lvl, a))
}

// Level is the level of a request's log line, by its outcome's kind, whatever its status: a
// stream that fails after its 200 is as much a failure as a 502. The gateway's own failure
// is an error; a provider's (unavailable, timed out, cut, refusing the gateway's
// credentials, unable to serve the request) a warning; the client's mistakes, limits and
// refusals, and a client that left, are information: nothing for the operator to fix. A
// request with no kind is a warning when it answered a 5xx (an echo error, a panic).
func Level(k llm.Kind, status int) slog.Level {
	switch k {
	case llm.Internal:
		return slog.LevelError
	case llm.Unavailable, llm.Timeout, llm.Truncated, llm.Auth, llm.Unsupported:
		return slog.LevelWarn
	case llm.KindNone:
		if status >= 500 {
			return slog.LevelWarn
		}
	}
	return slog.LevelInfo
}

// traceID is the request's trace id, to find its spans from its log line; "" without one.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// usage is Usage, zero when unknown.
func (a *Access) usage() Usage {
	if a.Usage == nil {
		return Usage{}
	}
	return *a.Usage
}

func (a *Access) tokensIn() int {
	if a.Usage == nil {
		return 0
	}
	return a.Usage.Prompt
}

func (a *Access) tokensOut() int {
	if a.Usage == nil {
		return 0
	}
	return a.Usage.Completion
}

// tokens is the total of Usage; 0 when unknown.
func (a *Access) tokens() int {
	if a.Usage == nil {
		return 0
	}
	return a.Usage.Total
}

// ms is milliseconds with microsecond precision: logs and headers use milliseconds (DESIGN §7).
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// RequestIDs are the ids of a request whose X-Request-Id header is h: record, new (NewID),
// and id, the caller's when it is short and printable (RequestID), else record. The client
// chooses id, so two requests may share it (a retry, another team's client); record is the
// one no other request has (issue 47).
func RequestIDs(h string) (id, record string) {
	record = NewID()
	if validRequestID(h) {
		return h, record
	}
	return record, record
}

// RequestID is the id of a request whose X-Request-Id header is h: the caller's id when it
// is short and printable, else a new one (NewID).
func RequestID(h string) string {
	if validRequestID(h) {
		return h
	}
	return NewID()
}

// validRequestID reports whether a client's X-Request-Id is one the gateway takes: 1 to 128
// printable ASCII characters, no space, so that it cannot break a log line or a header.
func validRequestID(h string) bool {
	return h != "" && len(h) <= 128 && strings.IndexFunc(h, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
}

// NewID is a new unique id: the time in ms then 48 random bits, in hex. Ids that grow with
// time land at the end of the request log's indexes instead of on a random page each (a
// third less CPU per record in SQLite: BenchmarkWriterIDs).
func NewID() string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16) // the time in b[:6]
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}
