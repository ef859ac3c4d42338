// Package logstore decides where the request log lives and how it is read back (DESIGN §7,
// issue 33): one Record per request, written exactly once (its id is unique in the store),
// kept in SQLite (the embedded default, one file) or PostgreSQL (a fleet: partitioned by
// day, retention by dropping days, migrations under an advisory lock), queried by Filter
// with keyset pagination, summed by Usage, exported and tailed. A Writer takes records off
// the request path: a bounded queue, batches, a bounded spool while the store fails, drops
// counted. It is the only package that speaks SQL; it knows no HTTP and no round.
package logstore
