package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Hooks other packages call where something happens that only they see. Each records a
// metric (on the Telemetry of the request ctx belongs to, else the process's) and, inside a
// request, an event on its server span. All are safe from any goroutine and cheap enough
// for any path except per token.

// Guardrail verdicts: the values Guardrail takes (any other is counted as "other").
const (
	VerdictPass  = "pass"  // the guardrail let the request or the answer through
	VerdictBlock = "block" // it refused: 422 guardrail_refused, or an in-band error
	VerdictRetry = "retry" // it refused with action: retry (a frontend run restarts the round)
)

// Guardrail records the verdict of guardrail name (a configured name) at stage (input,
// output) on the request ctx belongs to: the sluice.guardrail.verdicts counter, a
// sluice.guardrail span event and the request's record.
func Guardrail(ctx context.Context, name, stage, verdict string) {
	switch verdict {
	case VerdictPass, VerdictBlock, VerdictRetry:
	default:
		verdict = "other"
	}
	if rq, ok := ctx.Value(requestKey{}).(*Request); ok {
		rq.listed.verdict(Verdict{Name: name, Stage: stage, Verdict: verdict})
	}
	t := from(ctx)
	attrs := []attribute.KeyValue{attrGuardrail.String(name), attrVerdict.String(verdict)}
	t.inst.guardrails.Add(ctx, 1, metric.WithAttributes(attrs...))
	trace.SpanFromContext(ctx).AddEvent("sluice.guardrail", trace.WithAttributes(attrs...))
}

// Restart records that the round of the request ctx belongs to restarts on target after
// commit (frontend runs: on_midstream_failure: restart, or a guardrail's action: retry);
// reason is an llm.Kind or "guardrail".
func Restart(ctx context.Context, target, reason string) {
	t := from(ctx)
	t.inst.restarts.Add(ctx, 1, metric.WithAttributes(attrTarget.String(t.label(target)), attrOutcome.String(reason)))
	trace.SpanFromContext(ctx).AddEvent("sluice.restart",
		trace.WithAttributes(attrTarget.String(target), attrOutcome.String(reason)))
}

// Cooldown records that target went (back) into cooldown for left after a failure.
func Cooldown(ctx context.Context, target string, left time.Duration) {
	t := from(ctx)
	t.inst.cooldowns.Add(ctx, 1, metric.WithAttributes(attrTarget.String(t.label(target))))
	trace.SpanFromContext(ctx).AddEvent("sluice.cooldown",
		trace.WithAttributes(attrTarget.String(target), attribute.Float64("sluice.cooldown.seconds", left.Seconds())))
}

// RedisError counts a failed call to Redis (package redisstore calls it once per failure,
// whatever the on_failure policy does next).
func RedisError(ctx context.Context) {
	t := from(ctx)
	t.inst.redisErrors.Add(ctx, 1)
}

// RedisBreaker records that this replica's breaker opened (down: Redis counts as down, calls
// fail at once) or closed again.
func RedisBreaker(ctx context.Context, down bool) {
	d := int64(-1)
	if down {
		d = 1
	}
	from(ctx).inst.redisBreaker.Add(ctx, d)
}

// UsageSpooled records n more (or, negative, fewer) records of the account waiting for Redis.
func UsageSpooled(ctx context.Context, n int64) { from(ctx).inst.usageSpooled.Add(ctx, n) }

// UsageDropped counts n records of the account lost (the spool was full, or Redis refused
// them).
func UsageDropped(ctx context.Context, n int64) { from(ctx).inst.usageDropped.Add(ctx, n) }

// LogsDropped counts request log records lost (sluice_logs_dropped_total): the request log
// never holds a request up, so what it cannot keep is counted instead.
func LogsDropped(ctx context.Context, n int64) { from(ctx).inst.logsDropped.Add(ctx, n) }

// LogsDepth records the change of the request log writer's queue and spool
// (sluice_logs_queued, sluice_logs_spooled): n more (or, negative, fewer) records in each.
func LogsDepth(ctx context.Context, queued, spooled int64) {
	t := from(ctx)
	t.inst.logsQueued.Add(ctx, queued)
	t.inst.logsSpooled.Add(ctx, spooled)
}

// AuditDropped counts audit entries not written (sluice_audit_dropped_total): the admin
// API's change was made, so it answers it, and counts the entry it could not keep.
func AuditDropped(ctx context.Context, n int64) { from(ctx).inst.auditDropped.Add(ctx, n) }

// AuthFailure counts a failed attempt to authenticate on surface (admin_api, console) for
// reason (invalid, expired): sluice_auth_failures_total. Never the token, nor the address.
func AuthFailure(ctx context.Context, surface, reason string) {
	from(ctx).inst.authFailures.Add(ctx, 1, metric.WithAttributes(attrSurface.String(surface), attrReason.String(reason)))
}

// AuthThrottled counts an attempt on surface refused with a 429 because its address or its
// token failed too often (sluice_auth_throttled_total).
func AuthThrottled(ctx context.Context, surface string) {
	from(ctx).inst.authThrottled.Add(ctx, 1, metric.WithAttributes(attrSurface.String(surface)))
}

// Cache records what the response cache did for a request to alias (hit, coalesced, miss,
// bypass) and, for a hit, the provider tokens it did not spend; a span event says it too.
func Cache(ctx context.Context, alias, result string, saved int) {
	t := from(ctx)
	t.inst.cacheRequests.Add(ctx, 1, metric.WithAttributes(semconv.GenAIRequestModelKey.String(alias), attrCache.String(result)))
	if saved > 0 {
		t.inst.cacheSaved.Add(ctx, int64(saved), metric.WithAttributes(semconv.GenAIRequestModelKey.String(alias)))
	}
	trace.SpanFromContext(ctx).SetAttributes(attrCache.String(result))
}

// CacheEvicted records n answers the in-memory response cache pushed out to store one of
// alias.
func CacheEvicted(ctx context.Context, alias string, n int) {
	from(ctx).inst.cacheEvictions.Add(ctx, int64(n), metric.WithAttributes(semconv.GenAIRequestModelKey.String(alias)))
}

// CacheStored records an answer of n bytes stored in the response cache for alias.
func CacheStored(ctx context.Context, alias string, n int) {
	from(ctx).inst.cacheStored.Add(ctx, int64(n), metric.WithAttributes(semconv.GenAIRequestModelKey.String(alias)))
}

// Shadow counts a shadow call (package shadow, issue 49) by its outcome: "served", an
// llm.Kind's name, or "dropped" when every slot was busy and none was made.
func Shadow(ctx context.Context, outcome string) {
	from(ctx).inst.shadowCalls.Add(ctx, 1, metric.WithAttributes(attrOutcome.String(outcome)))
}
