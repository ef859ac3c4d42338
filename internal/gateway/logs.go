package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// requestLog is the request log of a configuration (logs:): each request of the route table
// becomes a record, handed to a writer that batches it to the store off the request path.
// The record holds what the client was shown and the access line holds, never a credential:
// keys are named by id and name, errors by their public text, and captured content is
// masked by the redaction rules before it is kept.
type requestLog struct {
	store   logstore.Store
	w       *logstore.Writer
	stop    context.CancelFunc // ends retain
	retired chan struct{}      // closed when retain returned
	replica string
	logs    config.Logs
	aliases map[string]config.Alias // each alias's capture
	redact  func(string) string     // the redaction rules (nil: none)
	own     func(string) string     // the gateway's own secrets alone (nil: none), for the other texts
}

// logsFromConfig opens the request log's store (migrations included) and starts its writer;
// nil when logs.url is "". An unusable store is an error: an operator who asked for a log
// must not run without one unnoticed.
func logsFromConfig(c *config.Config, replica string, redact, own func(string) string, log *slog.Logger) (*requestLog, error) {
	if c.Logs.URL == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := logstore.Open(ctx, logstore.Options{URL: c.Logs.URL, Retention: c.Logs.Retention.Std(),
		RollupRetention: c.Logs.RollupRetention.Std(), ContentRetention: c.Logs.ContentRetention.Std(), Log: log})
	if err != nil {
		return nil, fmt.Errorf("logs: %w", err)
	}
	l := &requestLog{store: st, replica: replica, logs: c.Logs, aliases: c.Models, redact: redact, own: own}
	var queued, spooled int // what OnDepth last reported: the gauges move by the difference
	l.w = logstore.NewWriter(st, logstore.WriterOptions{Queue: c.Logs.Queue, Log: log,
		OnDrop: func(n int) { telemetry.LogsDropped(context.Background(), int64(n)) },
		OnDepth: func(q, s int) {
			telemetry.LogsDepth(context.Background(), int64(q-queued), int64(s-spooled))
			queued, spooled = q, s
		}})
	rctx, stop := context.WithCancel(context.Background())
	l.stop, l.retired = stop, make(chan struct{})
	go l.retain(rctx, log)
	return l, nil
}

// RetainEvery is how often the log drops the days past logs.retention (and, on
// PostgreSQL, makes the next days' partitions).
const RetainEvery = time.Hour

// retain applies the retention now and every RetainEvery until ctx ends. Every replica does:
// dropping a day twice is a no-op.
func (l *requestLog) retain(ctx context.Context, log *slog.Logger) {
	defer close(l.retired)
	t := time.NewTicker(RetainEvery)
	defer t.Stop()
	for {
		if err := l.store.Retain(ctx, time.Now()); err != nil && ctx.Err() == nil {
			log.Warn("logs: retention", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Record takes the complete access record of a request (telemetry.Options.Record). It
// copies what it keeps and never blocks.
func (l *requestLog) Record(in *telemetry.Access) { l.w.Add(l.build(in)) }

// audit is where the admin API records its changes: the log store's audit table, or with
// no log (l nil) the last logstore.DefaultAuditMemory changes of this replica, in memory.
func (l *requestLog) audit() logstore.AuditStore {
	if l != nil {
		if st, ok := l.store.(logstore.AuditStore); ok {
			return st
		}
	}
	return logstore.NewAuditMemory(0)
}

// Close flushes what the writer holds, within a few seconds, and closes the store.
func (l *requestLog) Close() error {
	l.stop()
	<-l.retired
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(l.w.Close(ctx), l.store.Close())
}

func (l *requestLog) build(in *telemetry.Access) logstore.Record {
	end := in.Start.Add(in.Duration)
	r := logstore.Record{ID: cmp.Or(in.Record, in.ID), RequestID: in.ID, Time: in.Start, Replica: l.replica, KeyID: in.KeyID, KeyName: in.KeyName,
		KeyMeta: maps.Clone(in.KeyMeta), Team: in.Team, Wire: in.Wire, Method: in.Method, Path: in.Path, Alias: in.Model,
		Target: in.Target, Status: in.Status, Kind: kindName(in.Kind), Stream: in.Stream,
		FirstEventMS: ms(in.FirstEvent), FirstTokenMS: ms(in.FirstText), DurationMS: ms(in.Duration),
		OverheadMS: ms(in.Overhead), CostUSD: in.CostUSD, Cache: in.Cache, Redactions: in.Redactions,
		UserAgent: in.UserAgent, TraceID: in.TraceID, Error: in.Error, Capture: l.capture(in)}
	for _, a := range in.Tries {
		done := a.End
		if done.IsZero() {
			done = end // it ran until the request ended, or was abandoned
		}
		r.Attempts = append(r.Attempts, logstore.Attempt{Target: a.Target, Kind: kindName(a.Kind), MS: ms(done.Sub(a.Start)), Status: a.Status})
	}
	for _, t := range in.Turns {
		r.Turns = append(r.Turns, logstore.Turn{AtMS: ms(t.Start.Sub(in.Start)), MS: ms(t.End.Sub(t.Start)),
			TokensIn: t.Usage.PromptTokens, TokensOut: t.Usage.CompletionTokens})
	}
	if u := in.Usage; u != nil {
		r.TokensIn, r.TokensOut, r.TokensCached, r.TokensReasoning, r.TokensEstimated = u.Prompt, u.Completion, u.Cached, u.Reasoning, u.Estimated
		r.CacheReadTokens, r.CacheWriteTokens, r.CacheWrite1hTokens, r.CacheDropped = u.Cached, u.CacheWrite, u.CacheWrite1h, u.CacheDropped
	}
	r.SavedUSD, r.Shadow, r.Similarity = in.SavedUSD, in.Shadow, in.Similarity
	if in.Response != nil && !in.Cached() { // a response cache hit called no provider: no affinity either
		r.Affinity = in.Response.Affinity
	}
	for _, v := range in.Verdicts {
		r.Guardrails = append(r.Guardrails, logstore.Guardrail{Name: v.Name, Stage: v.Stage, Verdict: v.Verdict})
	}
	for _, c := range in.Calls {
		r.Tools = append(r.Tools, logstore.ToolCall{Name: c.Name, Server: c.Server, MS: ms(c.Duration), Outcome: c.Outcome})
	}
	if r.Capture == "content" {
		r.Content = l.content(in)
	}
	if l.own != nil { // what a client sent beside its messages may quote a secret too (issue 47)
		r.Error, r.UserAgent, r.Path, r.KeyName = l.own(r.Error), l.own(r.UserAgent), l.own(r.Path), l.own(r.KeyName)
	}
	return r
}

// capture is what the record keeps: the key's choice, else the alias's, else logs.capture.
func (l *requestLog) capture(in *telemetry.Access) string {
	if in.Capture != "" {
		return in.Capture
	}
	if c := l.aliases[in.Alias].Capture; c != "" {
		return c
	}
	return l.logs.Capture
}

// content is the request's messages and the answer as text, masked by the redaction rules
// (whatever the alias's redact_input: a log is not a provider, but it must not keep a
// secret either), each cut at logs.max_content_bytes.
func (l *requestLog) content(in *telemetry.Access) *logstore.Content {
	c := &logstore.Content{Cap: l.logs.MaxContentBytes}
	var req, ans strings.Builder
	if in.Request != nil {
		for _, m := range in.Request.Messages {
			req.WriteString(string(m.Role))
			req.WriteString(": ")
			for _, p := range m.Parts {
				switch {
				case p.Text != "":
					req.WriteString(p.Text)
				case p.Type != llm.PartText: // an image, a file, a recording: named, never its bytes
					req.WriteString("[" + string(p.Type) + "]")
				}
			}
			for _, tc := range m.ToolCalls {
				req.WriteString("[tool call " + tc.Name + "] " + tc.Arguments)
			}
			req.WriteString("\n")
		}
	}
	if in.Response != nil {
		for _, ch := range in.Response.Choices {
			ans.WriteString(ch.Text)
			for _, tc := range ch.ToolCalls {
				ans.WriteString("[tool call " + tc.Name + "] " + tc.Arguments)
			}
		}
	}
	var cut1, cut2 bool
	c.Request, cut1 = l.capped(req.String())
	c.Answer, cut2 = l.capped(ans.String())
	c.Truncated = cut1 || cut2
	return c
}

func (l *requestLog) capped(s string) (string, bool) {
	if l.redact != nil {
		s = l.redact(s)
	}
	if len(s) <= l.logs.MaxContentBytes {
		return s, false
	}
	s = s[:l.logs.MaxContentBytes]
	return strings.ToValidUTF8(s, ""), true // a cut rune is dropped
}

func kindName(k llm.Kind) string {
	if k == llm.KindNone {
		return ""
	}
	return k.String()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

var _ io.Closer = (*requestLog)(nil)
