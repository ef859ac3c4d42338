package logstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Store keeps records and answers queries about them. Implementations are safe for
// concurrent use by any number of goroutines (and, for PostgreSQL, replicas); Close ends
// every call in flight's use of the store and is called once.
type Store interface {
	// Write stores rs, each exactly once: a record the store already holds is skipped, so a
	// batch written again, after a timeout that landed all the same, changes nothing. SQLite
	// keys on the id; PostgreSQL on (id, time), since a partitioned table's unique key must
	// hold the partition key: a record is written again with its time unchanged (the Writer
	// keeps it). A record without id or time fails the whole call (an llm.Invalid error).
	Write(ctx context.Context, rs []Record) error
	// Query returns one page of the records f selects, newest first (time, then id).
	Query(ctx context.Context, f Filter) (Page, error)
	// Get returns the record of one request id, or an error matching ErrNotFound.
	Get(ctx context.Context, id string) (*Record, error)
	// Usage sums the records of q's range by bucket and group.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// Retain drops the records of every UTC day that ended before now minus the
	// retention, and makes the days ahead ready (PostgreSQL); it empties the content of the
	// records older than the content retention, and drops the rollups of the days that ended
	// before now minus the rollup retention. Call it about once an hour.
	Retain(ctx context.Context, now time.Time) error
	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
	io.Closer
}

// Options configure Open.
type Options struct {
	// URL names the store: sqlite://path/to/logs.db (relative or absolute, the folder is
	// created; ?busy_timeout=ms sets how long a write waits for a lock, default 5000), or
	// postgres://... / postgresql://... (any libpq URL pgx accepts).
	URL string
	// Retention is how long records are kept; 0 means DefaultRetention.
	Retention time.Duration
	// RollupRetention is how long the hourly rollups are kept (issue 50), longer than the
	// records: /admin/usage reads them; 0 means DefaultRollupRetention.
	RollupRetention time.Duration
	// ContentRetention is how long captured content is kept (issue 50): past it a record
	// keeps its metadata until Retention, its content is emptied (Record.Content nil). 0
	// means DefaultContentRetention; one at or past Retention empties nothing.
	ContentRetention time.Duration
	// Log receives what the store does on its own (migrations, partitions, retention);
	// nil discards it.
	Log *slog.Logger
}

// The retentions of Options left 0.
const (
	DefaultRetention        = 30 * 24 * time.Hour
	DefaultRollupRetention  = 400 * 24 * time.Hour
	DefaultContentRetention = 7 * 24 * time.Hour
)

// ErrNotFound is what Get returns (wrapped) for an id the store does not hold.
var ErrNotFound = errors.New("logstore: no such request")

// Page is one page of a query: the records, newest first, and the cursor of the next page
// ("" when this is the last).
type Page struct {
	Records    []Record `json:"records"`
	NextCursor string   `json:"next_cursor"`
}

// Bucket is the width of a usage row in time.
type Bucket string

const (
	// Whole makes one row per group for the whole range (its Bucket is the range's From).
	Whole Bucket = ""
	Hour  Bucket = "hour"
	Day   Bucket = "day"
)

// UsageQuery selects what Usage sums: records with From <= time < To, of one key when Key
// is set and of one team when Team is, bucketed by Bucket and grouped by GroupBy: ""
// (everything), "key", "alias", "target", "team", or "meta.<name>" (a field of the key's
// metadata; records without it make the group "").
type UsageQuery struct {
	From, To time.Time
	Bucket   Bucket
	GroupBy  string
	Key      string
	Team     string
	// Scope narrows the sums to what a caller who is not admin may read, as Filter.Scope
	// does a page of records: a condition of the query, so no other team's record is in
	// any sum. nil: every record.
	Scope *Scope
}

// UsageRow is one bucket of one group. Errors counts requests that ended in an error other
// than the client leaving (as /admin/usage does); CacheHits those the response cache
// answered. FirstToken is the Sketch of the first-token times of the requests that had one,
// and P95FirstTokenMS its 95th percentile (within one bin of the sketch), 0 when none did. CacheReadTokens, CacheWriteTokens and SavedUSD sum the
// provider prompt cache's fields of the records (issue 46): CacheReadTokens / TokensIn is
// the bucket's cache-hit ratio, as the console charts it.
type UsageRow struct {
	Bucket           time.Time `json:"bucket"`
	Group            string    `json:"group"`
	KeyName          string    `json:"key_name,omitempty"`
	Requests         int64     `json:"requests"`
	Errors           int64     `json:"errors"`
	TokensIn         int64     `json:"tokens_in"`
	TokensOut        int64     `json:"tokens_out"`
	CostUSD          float64   `json:"cost_usd"`
	P95FirstTokenMS  float64   `json:"p95_first_token_ms"`
	CacheReadTokens  int64     `json:"cache_read_tokens"`
	CacheWriteTokens int64     `json:"cache_write_tokens"`
	SavedUSD         float64   `json:"saved_usd"`
	CacheHits        int64     `json:"cache_hits"`
	FirstToken       Sketch    `json:"-"`
}

// opener opens one kind of store from its URL.
type opener func(ctx context.Context, opt Options) (Store, error)

// kinds is the table of stores by URL scheme; each kind registers itself (register) in its
// own file, and Open only reads the table.
var kinds = map[string]opener{}

func register(scheme string, open opener) { kinds[scheme] = open }

// Open opens the store opt.URL names, creating or migrating its schema. The caller owns the
// Store and closes it.
func Open(ctx context.Context, opt Options) (Store, error) {
	scheme, _, ok := strings.Cut(opt.URL, "://")
	open := kinds[strings.ToLower(scheme)]
	if !ok || open == nil {
		names := make([]string, 0, len(kinds))
		for k := range kinds {
			names = append(names, k+"://")
		}
		sort.Strings(names)
		return nil, fmt.Errorf("logstore: the URL %q names no store: want one of %s", redactURL(opt.URL), strings.Join(names, ", "))
	}
	if opt.Retention <= 0 {
		opt.Retention = DefaultRetention
	}
	if opt.RollupRetention <= 0 {
		opt.RollupRetention = DefaultRollupRetention
	}
	if opt.ContentRetention <= 0 {
		opt.ContentRetention = DefaultContentRetention
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	return open(ctx, opt)
}

// redactURL hides a password in a URL, for error messages.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	auth, host, ok := strings.Cut(rest, "@")
	if !ok {
		return u
	}
	if user, _, hasPass := strings.Cut(auth, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return u
}

// errorf is a request the store refuses (a bad record, query or filter).
func errorf(format string, args ...any) error {
	return &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// metaField returns the metadata field a GroupBy of "meta.<name>" names.
func metaField(groupBy string) (string, bool) {
	name, ok := strings.CutPrefix(groupBy, "meta.")
	if !ok {
		return "", false
	}
	return name, validMetaName(name)
}

// validMetaName keeps metadata field names to what is safe in a JSON path of either store.
func validMetaName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// checkUsage validates q, naming the field that is wrong.
func checkUsage(q UsageQuery) error {
	bad := func(param, format string, args ...any) error {
		e := errorf(format, args...).(*llm.Error)
		e.Param, e.Code = param, "invalid_usage_query"
		return e
	}
	switch {
	case q.From.IsZero() || q.To.IsZero():
		return bad("from", "usage needs both from and to")
	case q.From.After(q.To):
		return bad("from", "from (%s) is after to (%s)", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	switch q.Bucket {
	case Whole, Hour, Day:
	default:
		return bad("bucket", "bucket %q is not one of hour, day", q.Bucket)
	}
	switch q.GroupBy {
	case "", "key", "alias", "target", "team":
	default:
		if _, ok := metaField(q.GroupBy); !ok {
			return bad("group_by", "group_by %q is not one of key, alias, target, team, meta.<name> (letters, digits, _ - .)", q.GroupBy)
		}
	}
	return nil
}
