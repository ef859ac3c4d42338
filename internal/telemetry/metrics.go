package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Metric names. The gen_ai.* ones are the GenAI semantic conventions' (semconv v1.41):
// gen_ai.server.* for what the gateway serves, gen_ai.client.* for its calls to providers.
// The sluice.* ones are the gateway's own. Durations are in seconds (DESIGN §7).
const (
	MetricServerDuration = "gen_ai.server.request.duration"
	MetricServerTTFT     = "gen_ai.server.time_to_first_token"
	MetricClientDuration = "gen_ai.client.operation.duration"
	MetricClientTTFC     = "gen_ai.client.operation.time_to_first_chunk"
	MetricClientTokens   = "gen_ai.client.token.usage"
	MetricOverhead       = "sluice.gateway.overhead"
	MetricAttempts       = "sluice.attempts"
	MetricFallbacks      = "sluice.fallbacks"
	MetricCooldowns      = "sluice.cooldowns"
	MetricRedactions     = "sluice.redactions"
	MetricGuardrails     = "sluice.guardrail.verdicts"
	MetricRestarts       = "sluice.restarts"
	MetricOpenStreams    = "sluice.streams.open"
	MetricRedisErrors    = "sluice.redis.errors"
	MetricRedisBreaker   = "sluice.redis.breaker.open"
	MetricUsageSpooled   = "sluice.usage.spooled"
	MetricUsageDropped   = "sluice.usage.dropped"
	MetricLogsDropped    = "sluice.logs.dropped"
	MetricLogsQueued     = "sluice.logs.queued"
	MetricLogsSpooled    = "sluice.logs.spooled"
	MetricAuditDropped   = "sluice.audit.dropped"
	MetricAuthFailures   = "sluice.auth.failures"
	MetricAuthThrottled  = "sluice.auth.throttled"
	MetricCacheRequests  = "sluice.cache.requests"
	MetricCacheStored    = "sluice.cache.stored"
	MetricCacheSaved     = "sluice.cache.saved"
	MetricCacheEvictions = "sluice.cache.evictions"
	// The provider's prompt cache (issue 46), apart from the response cache's sluice.cache.*:
	// the conventions' gen_ai.token.type has only input and output, and its histogram sums to
	// the tokens billed, so the cache's tokens (part of the input) are counters of their own.
	MetricCacheReadTokens  = "sluice.cache_read.tokens"
	MetricCacheWriteTokens = "sluice.cache_write.tokens"
	// MetricShadowCalls counts shadow calls (issue 49, package shadow) by outcome.
	MetricShadowCalls = "sluice.shadow.calls"
)

// Attribute keys of the gateway's own (the gen_ai.*, http.* and error.type keys come from
// semconv). Every value is bounded: configured names, enums, never a request or user id.
const (
	attrTarget    = attribute.Key("sluice.target")    // "provider/model", bounded by label
	attrOutcome   = attribute.Key("sluice.outcome")   // llm.Kind: none, timeout, ...
	attrCommitted = attribute.Key("sluice.committed") // the attempt committed
	attrDetector  = attribute.Key("sluice.detector")  // redaction detector
	attrGuardrail = attribute.Key("sluice.guardrail") // guardrail name
	attrVerdict   = attribute.Key("sluice.verdict")   // pass | block | retry
	attrStream    = attribute.Key("sluice.stream")    // the client asked for a stream
	attrCache     = attribute.Key("sluice.cache")     // hit | coalesced | miss | bypass
	attrCacheTTL  = attribute.Key("sluice.cache.ttl") // a prompt cache write's lifetime: 5m | 1h
	attrSurface   = attribute.Key("sluice.surface")   // where a token was presented: admin_api | console
	attrReason    = attribute.Key("sluice.reason")    // why it failed: invalid | expired
)

// durationBuckets run from 10 ms to several minutes (DESIGN §7): a first token of a fast
// model lands in the low buckets, a reasoning model's whole answer in the high ones.
var durationBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640}

// tokenBuckets are the conventions' advice for gen_ai.client.token.usage.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}

type instruments struct {
	serverDuration, ttft, overhead metric.Float64Histogram
	clientDuration, ttfc           metric.Float64Histogram
	tokens                         metric.Int64Histogram
	attempts, fallbacks, cooldowns metric.Int64Counter
	redactions, guardrails         metric.Int64Counter
	restarts, redisErrors          metric.Int64Counter
	openStreams                    metric.Int64UpDownCounter
	redisBreaker, usageSpooled     metric.Int64UpDownCounter
	logsQueued, logsSpooled        metric.Int64UpDownCounter
	usageDropped, logsDropped      metric.Int64Counter
	auditDropped                   metric.Int64Counter
	shadowCalls                    metric.Int64Counter
	authFailures, authThrottled    metric.Int64Counter
	toolDuration                   metric.Float64Histogram
	cacheRequests, cacheStored     metric.Int64Counter
	cacheEvictions                 metric.Int64Counter
	cacheSaved                     metric.Int64Counter
	cacheReadTokens                metric.Int64Counter
	cacheWriteTokens               metric.Int64Counter
}

// newInstruments creates the instruments on m. An error from the API only ever comes with a
// working no-op instrument (a bad name would be a bug here), so errors are dropped.
func newInstruments(m metric.Meter) instruments {
	sec := func(name, desc string) metric.Float64Histogram {
		h, _ := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	var in instruments
	in.serverDuration = sec(MetricServerDuration, "Time from a model request's arrival to its last byte.")
	in.ttft = sec(MetricServerTTFT, "Time from a streamed request's arrival to the first text released to the client.")
	in.overhead = sec(MetricOverhead, "Time a request spent in the gateway outside calls to providers.")
	in.clientDuration = sec(MetricClientDuration, "Duration of one call to a provider (an attempt), to its end or its failure.")
	in.ttfc = sec(MetricClientTTFC, "Time from the start of a call to a provider to its first healthy event (the commit).")
	in.tokens, _ = m.Int64Histogram(MetricClientTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Input and output tokens of the calls that served."),
		metric.WithExplicitBucketBoundaries(tokenBuckets...))
	in.attempts = count(MetricAttempts, "{attempt}", "Calls to providers, by target and outcome kind.")
	in.fallbacks = count(MetricFallbacks, "{fallback}", "Moves to the next target of a chain, by the failed target and its outcome kind.")
	in.cooldowns = count(MetricCooldowns, "{cooldown}", "Targets put (back) in cooldown after a failure.")
	in.redactions = count(MetricRedactions, "{mask}", "Masks applied to answers, by detector.")
	in.guardrails = count(MetricGuardrails, "{verdict}", "Guardrail verdicts, by guardrail and verdict.")
	in.restarts = count(MetricRestarts, "{restart}", "Rounds restarted after commit (frontend runs).")
	in.redisErrors = count(MetricRedisErrors, "{error}", "Failed calls to Redis, those the breaker failed at once included.")
	in.redisBreaker, _ = m.Int64UpDownCounter(MetricRedisBreaker, metric.WithUnit("{breaker}"),
		metric.WithDescription("1 while this replica counts Redis as down (calls fail at once until a probe succeeds)."))
	in.usageSpooled, _ = m.Int64UpDownCounter(MetricUsageSpooled, metric.WithUnit("{record}"),
		metric.WithDescription("Usage records and budget spends waiting for Redis in the spool."))
	in.usageDropped = count(MetricUsageDropped, "{record}", "Usage records and budget spends lost: the spool was full, or Redis refused them.")
	in.logsQueued, _ = m.Int64UpDownCounter(MetricLogsQueued, metric.WithUnit("{record}"),
		metric.WithDescription("Request log records in the writer's queue, waiting for a batch (issue 50)."))
	in.logsSpooled, _ = m.Int64UpDownCounter(MetricLogsSpooled, metric.WithUnit("{record}"),
		metric.WithDescription("Request log records in the writer's spool, waiting for a store that failed."))
	in.logsDropped = count(MetricLogsDropped, "{record}", "Request log records lost: the writer's queue or spool was full, or the store refused them.")
	in.auditDropped = count(MetricAuditDropped, "{entry}", "Audit entries not written: the change was made, the log store refused its entry.")
	in.authFailures = count(MetricAuthFailures, "{failure}", "Failed attempts to authenticate to the admin API or sign in to the console, by surface and reason.")
	in.authThrottled = count(MetricAuthThrottled, "{attempt}", "Attempts refused (429) because their address or token failed too often, by surface.")
	in.openStreams, _ = m.Int64UpDownCounter(MetricOpenStreams, metric.WithUnit("{stream}"),
		metric.WithDescription("Event streams being served."))
	in.cacheRequests = count(MetricCacheRequests, "{request}", "Requests to aliases that cache, by alias and what the cache did.")
	in.cacheStored = count(MetricCacheStored, "By", "Bytes of answers stored in the response cache, by alias.")
	in.cacheSaved = count(MetricCacheSaved, "{token}", "Provider tokens that cache hits did not spend, by alias.")
	in.cacheEvictions = count(MetricCacheEvictions, "{entry}", "Answers the in-memory cache's bound pushed out to store others, by the alias that stored.")
	in.cacheReadTokens = count(MetricCacheReadTokens, "{token}", "Prompt tokens the calls that served read from the provider's prompt cache.")
	in.cacheWriteTokens = count(MetricCacheWriteTokens, "{token}", "Prompt tokens the calls that served wrote to the provider's prompt cache, by lifetime (5m, 1h).")
	in.shadowCalls = count(MetricShadowCalls, "{call}", "Shadow calls by outcome: served, the error kind of a failed one, or dropped (every slot busy: not made).")
	in.toolDuration = sec(MetricToolDuration, "Duration of one server-side tool invocation, by tool and outcome.")
	// The unlabelled series are there from the start, at zero: a series that appears only
	// with its first loss reads as "no data" to an alert (and to rate()), not as "none lost".
	ctx := context.Background()
	for _, c := range []metric.Int64Counter{in.redisErrors, in.usageDropped, in.logsDropped, in.auditDropped} {
		c.Add(ctx, 0)
	}
	for _, g := range []metric.Int64UpDownCounter{in.redisBreaker, in.usageSpooled, in.openStreams, in.logsQueued, in.logsSpooled} {
		g.Add(ctx, 0)
	}
	return in
}

// cacheTokens counts the prompt cache's reads and writes of a call that served, with the
// labels of its token usage (c: operation, provider, model); a write by its lifetime.
func (t *Telemetry) cacheTokens(ctx context.Context, c []attribute.KeyValue, u *Usage) {
	c = c[:len(c):len(c)] // appending copies
	if u.Cached > 0 {
		t.inst.cacheReadTokens.Add(ctx, int64(u.Cached), t.sets.opt(c...).add...)
	}
	w1h := min(u.CacheWrite1h, u.CacheWrite)
	if w := u.CacheWrite - w1h; w > 0 {
		t.inst.cacheWriteTokens.Add(ctx, int64(w), t.sets.opt(append(c, attrCacheTTL.String("5m"))...).add...)
	}
	if w1h > 0 {
		t.inst.cacheWriteTokens.Add(ctx, int64(w1h), t.sets.opt(append(c, attrCacheTTL.String("1h"))...).add...)
	}
}
