// Package redisstore keeps the gateway's shared state in Redis, so that replicas behind a
// load balancer act as one: virtual keys (auth.Store), rate limits (limit.Limiter) and the
// health of targets (fallback.Health). It is the only package that imports go-redis.
//
// Every call has a short timeout. When Redis cannot answer, the named policy decides
// (redis.on_failure): open serves on with this replica's own state (local limits, local
// health, keys it has seen), closed refuses with ErrUnavailable. Failures are counted and
// logged at most once per interval, never once per request.
//
// Key layout: everything under "sluice:", hash-tagged so that the keys one script touches
// share a Redis Cluster slot:
//
//	sluice:{keys}:by-hash        hash  SHA-256 of a key -> its record (JSON, no secret)
//	sluice:{keys}:by-id          hash  key id -> SHA-256
//	sluice:{key:<id>}:rpm        zset  the requests log: reservation id, scored by ms
//	sluice:{key:<id>}:tpm        zset  the tokens log: reservation id, scored by ms
//	sluice:{key:<id>}:tpm:cost   hash  reservation id -> tokens (reconciled after the call)
//	sluice:{key:<id>}:tpm:sum    string the tokens in the log
//	sluice:{health:<target>}     hash  fails, until (ms), probe (lease end, ms)
//
// Times in scripts are Redis's own (TIME), so replicas need not agree on the clock.
package redisstore
