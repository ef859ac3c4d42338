// Package telemetry decides what the gateway tells its operators about each request: today
// the access log line (log/slog), with the time to first token as a reader sees it. It never
// records a key, a prompt or a completion. OpenTelemetry traces and metrics join it here.
package telemetry

import (
	"context"
	"log/slog"
	"time"
)

// Access is what one request's log line says.
type Access struct {
	ID       string
	Method   string
	Path     string
	Status   int
	Duration time.Duration
	Model    string // what the client asked for: an alias or provider/model
	Target   string // what served it
	Attempts int
	Stream   bool
	Kind     string // outcome kind (llm.Kind), "none" when it served
	// FirstEvent is the time to the first healthy upstream event, FirstText to the first text
	// released to the client (what a reader waits for); zero when there was none.
	FirstEvent, FirstText time.Duration
	Redactions            int // masks applied to the answer
	// KeyID and KeyName name the caller's virtual key (never the key itself); empty when auth
	// is off or the caller had no valid key.
	KeyID, KeyName string
	// Usage is the answer's token usage, set by the handler that knows it; nil otherwise. The
	// rate limiter reconciles its token reservation with it.
	Usage *Usage
}

// Usage is the token usage of one answer.
type Usage struct {
	Prompt, Completion, Total int
	Estimated                 bool // the stream ended without a usage report
}

// LogAccess writes the access line: info, or warn for a 5xx.
func LogAccess(ctx context.Context, log *slog.Logger, a *Access) {
	lvl := slog.LevelInfo
	if a.Status >= 500 {
		lvl = slog.LevelWarn
	}
	log.LogAttrs(ctx, lvl, "request",
		slog.String("id", a.ID), slog.String("method", a.Method), slog.String("path", a.Path),
		slog.Int("status", a.Status), slog.Float64("ms", ms(a.Duration)),
		slog.String("model", a.Model), slog.String("target", a.Target),
		slog.Int("attempts", a.Attempts), slog.Bool("stream", a.Stream), slog.String("kind", a.Kind),
		slog.Float64("first_event_ms", ms(a.FirstEvent)), slog.Float64("ttft_ms", ms(a.FirstText)),
		slog.Int("redactions", a.Redactions), slog.String("key_id", a.KeyID), slog.String("key_name", a.KeyName),
		slog.Int("tokens", a.tokens()))
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
