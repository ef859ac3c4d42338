// Package redisstore keeps the gateway's shared state in Redis, so that replicas behind a
// load balancer act as one: virtual keys (auth.Store), rate limits (limit.Limiter), the
// health of targets (fallback.Health), the usage account and budgets (usage.Store,
// usage.Budgets). It is the only package that imports go-redis. Redis is one node, a Redis
// Cluster or a master under Sentinel (forms.go): every part takes a redis.UniversalClient.
//
// Every call has a short timeout. When Redis cannot answer, the named policy decides
// (redis.on_failure): open serves on with this replica's own state (local limits, local
// health, keys it has seen), closed refuses with ErrUnavailable. Failures are counted and
// logged at most once per interval, never once per request. A timeout or a connection error
// opens a breaker (breaker.go): calls fail at once, without waiting, until a background
// probe finds Redis back. The account's writes Redis cannot take wait in a bounded spool
// and are written once it answers, each exactly once (spool.go).
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
//	sluice:{usage:<day>}         hash  "<key>\x1f<alias>\x1f<target>\x1f<counter>" -> count (400 days)
//	sluice:{usage:<day>}:r:<id>  string a record added (1 hour: a record written again counts once)
//	sluice:{budget:<id>}:day:<d> string nano-USD spent and reserved on UTC day d (2 days)
//	sluice:{budget:<id>}:month:<m> string the same for UTC month m (32 days)
//	sluice:{budget:<id>}:r:<rid>   string what both hold for reservation rid (1 hour)
//	sluice:{stats}:replicas      zset  replica -> ms of its last statistics snapshot
//	sluice:{stats}:r:<replica>   string its snapshot for /admin/stats (JSON, TTL: the window)
//	sluice:{console}:session:<id> string a console session (JSON; id: SHA-256 of the cookie; TTL: the session's)
//	sluice:{aff:<key>}           string the group member serving a conversation (key: a hash of alias, element, conversation; TTL 5m, renewed as it is read)
//
// Times in scripts are Redis's own (TIME), so replicas need not agree on the clock.
package redisstore
