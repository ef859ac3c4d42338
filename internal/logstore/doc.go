// Package logstore is the request log (issue 33, DESIGN §12): one Record per request, kept
// in a Store, the only package of the gateway that speaks SQL. It decides how records are
// kept and found: the schema and its migrations, partitions and retention, the filters of
// the admin API (ParseFilter) and their keyset pagination, usage sums, and how records get
// there without touching the request path (Writer: a bounded queue, batches, a bounded
// spool, drops counted).
//
// Two stores, chosen by the URL's scheme (each registers itself; Open reads the table):
//
//	sqlite://./data/logs.db    the embedded default: a file in WAL mode, pure-Go driver
//	postgres://host/db         fleets: a table partitioned by UTC day, BRIN and btree indexes,
//	                           retention by dropping partitions, migrations under an
//	                           advisory lock so replicas may start at once
//
// The same stores keep the audit log of the admin API (audit.go: AuditStore, a table of
// its own, written at once and never dropped by retention), and AuditMemory keeps its last
// entries when no store is configured.
//
// Records in, records out: the package knows no HTTP, no round and no telemetry; the gateway
// builds a Record and counts drops through WriterOptions.OnDrop. Tail polls Query, so a live
// view works across replicas sharing a store.
package logstore
