package logstore

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Filter selects records: From <= time < To, and each field that is set. The zero value of
// a field selects everything (a zero From or To: no bound).
type Filter struct {
	From, To time.Time
	// Key is a key id.
	Key    string
	Team   string // a team's name (issue 37)
	Alias  string
	Target string
	Status int
	// Kind is an error kind's name (llm.Kind.String).
	Kind   string
	Stream *bool
	Cache  string
	// Affinity is conversation affinity's outcome (issue 46): new, kept or moved.
	Affinity string
	// RequestID is the X-Request-Id the clients got (Record.RequestID, issue 47): every
	// record of that id, a retry's and another team's with the same id included (Scope
	// still applies).
	RequestID string
	// Q is text searched in the captured content (case-insensitive; plain text, no pattern).
	Q string
	// Limit is the page size: 1 to MaxLimit; 0 means DefaultLimit.
	Limit int
	// Cursor is Page.NextCursor of the page before: the records after it, in the same order.
	Cursor string
	// Scope, when set, narrows the records to what a caller who is not admin may read
	// (issue 37), whatever the other fields ask: it is a condition of the query itself, so
	// pages are full and the cursor exact. The admin API sets it from the caller's role;
	// ParseFilter and Values never carry it. nil: every record.
	Scope *Scope
}

// Scope is the records of Teams (Record.Team, the key's team when the request was made),
// and those of Keys (key ids: a caller's own keys, teamless ones included). An empty Scope
// selects nothing: a scope fails closed.
type Scope struct {
	Teams, Keys []string
}

// maxScope bounds each list of a Scope: past it a query's placeholders would outgrow what
// the stores take (SQLite: 32,766 in all); a caller with more teams or keys than this reads
// the first ones'.
const maxScope = 1000

// Holds reports whether s (nil: no scope) holds r: the check of one record (GET
// /admin/logs/{id}), the same rule as the query's.
func (s *Scope) Holds(r *Record) bool {
	return s == nil || r.Team != "" && slices.Contains(s.Teams, r.Team) || slices.Contains(s.Keys, r.KeyID)
}

const (
	DefaultLimit = 100
	MaxLimit     = 1000
	// DefaultRange is the range of a filter without from.
	DefaultRange = 24 * time.Hour
	maxText      = 256  // a key, alias, target: longer is not a name
	maxQ         = 1024 // the text searched
)

// params are the query parameters ParseFilter knows, in the order Values writes them.
var params = []string{"from", "to", "key", "team", "alias", "target", "status", "kind", "stream", "cache", "affinity", "request_id", "q", "limit", "cursor"}

// cacheOutcomes are the values Record.Cache takes besides "".
var cacheOutcomes = []string{"hit", "miss", "bypass", "coalesced"}

// affinityOutcomes are the values Record.Affinity takes besides "" (llm.Response.Affinity).
var affinityOutcomes = []string{"new", "kept", "moved"}

// ParseFilter reads a filter from query parameters (GET /admin/logs and its export and
// tail): from and to (RFC 3339; default to now, from 24 h before to), key, team, alias, target,
// status, kind, stream (true or false), cache, affinity, request_id, q, limit (1 to 1000, default
// 100) and cursor.
// An empty value is the parameter left out. Anything else, an unknown parameter or one given
// twice included, is an *llm.Error (Invalid, 400, code invalid_filter) whose Param and
// message name the parameter. A route that takes other parameters (an export's format)
// removes them first.
func ParseFilter(v url.Values, now time.Time) (Filter, error) {
	var f Filter
	if err := checkParams(v, params); err != nil {
		return Filter{}, err
	}
	get := func(name string) string { return v.Get(name) }
	var err error
	if s := get("to"); s != "" {
		if f.To, err = parseTime(s); err != nil {
			return Filter{}, badFilter("to", "to: %q is not an RFC 3339 time (2026-01-02T15:04:05Z)", clip(s))
		}
	} else {
		f.To = now.UTC().Truncate(time.Microsecond)
	}
	if s := get("from"); s != "" {
		if f.From, err = parseTime(s); err != nil {
			return Filter{}, badFilter("from", "from: %q is not an RFC 3339 time (2026-01-02T15:04:05Z)", clip(s))
		}
	} else {
		f.From = f.To.Add(-DefaultRange)
	}
	if f.From.After(f.To) {
		return Filter{}, badFilter("from", "from (%s) is after to (%s)", f.From.Format(time.RFC3339Nano), f.To.Format(time.RFC3339Nano))
	}
	for _, p := range []struct {
		name string
		dst  *string
		max  int
	}{{"key", &f.Key, maxText}, {"team", &f.Team, maxText}, {"alias", &f.Alias, maxText}, {"target", &f.Target, maxText},
		{"request_id", &f.RequestID, maxIDLen}, {"q", &f.Q, maxQ}} {
		s := get(p.name)
		if err := checkText(p.name, s, p.max); err != nil {
			return Filter{}, err
		}
		*p.dst = s
	}
	if s := get("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return Filter{}, badFilter("status", "status: %q is not an HTTP status (100 to 599)", clip(s))
		}
		f.Status = n
	}
	if s := get("kind"); s != "" {
		if !validKind(s) {
			return Filter{}, badFilter("kind", "kind: %q is not an error kind (%s)", clip(s), strings.Join(kindNames(), ", "))
		}
		f.Kind = s
	}
	switch s := get("stream"); s {
	case "":
	case "true", "false":
		b := s == "true"
		f.Stream = &b
	default:
		return Filter{}, badFilter("stream", "stream: %q is neither true nor false", clip(s))
	}
	for _, p := range []struct {
		name  string
		dst   *string
		among []string
	}{{"cache", &f.Cache, cacheOutcomes}, {"affinity", &f.Affinity, affinityOutcomes}} {
		if s := get(p.name); s != "" {
			if !slices.Contains(p.among, s) {
				return Filter{}, badFilter(p.name, "%s: %q is not one of %s", p.name, clip(s), strings.Join(p.among, ", "))
			}
			*p.dst = s
		}
	}
	if f.Limit, err = parseLimit(get("limit")); err != nil {
		return Filter{}, err
	}
	if s := get("cursor"); s != "" {
		if _, err := decodeCursor(s); err != nil {
			return Filter{}, badFilter("cursor", "cursor: %q is not a cursor this API gave (take next_cursor as it is)", clip(s))
		}
		f.Cursor = s
	}
	return f, nil
}

// Values is f as query parameters: ParseFilter(f.Values(), now) is f again (the admin API
// builds links with it).
func (f Filter) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	// Always both: left out, ParseFilter would take the defaults.
	set("from", f.From.UTC().Format(time.RFC3339Nano))
	set("to", f.To.UTC().Format(time.RFC3339Nano))
	set("key", f.Key)
	set("team", f.Team)
	set("alias", f.Alias)
	set("target", f.Target)
	if f.Status != 0 {
		set("status", strconv.Itoa(f.Status))
	}
	set("kind", f.Kind)
	if f.Stream != nil {
		set("stream", strconv.FormatBool(*f.Stream))
	}
	set("cache", f.Cache)
	set("affinity", f.Affinity)
	set("request_id", f.RequestID)
	set("q", f.Q)
	if f.Limit != 0 {
		set("limit", strconv.Itoa(f.Limit))
	}
	set("cursor", f.Cursor)
	return v
}

// limit is f's page size, defaults applied.
func (f Filter) limit() int { return limitOf(f.Limit) }

// checkParams refuses a parameter not in known, or one given twice, naming it.
func checkParams(v url.Values, known []string) error {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names) // the first bad parameter is always the same one
	for _, name := range names {
		if !slices.Contains(known, name) {
			return badFilter(name, "unknown filter parameter %q: the filters are %s", clip(name), strings.Join(known, ", "))
		}
		if len(v[name]) > 1 {
			return badFilter(name, "the filter %s is given %d times: give it once", name, len(v[name]))
		}
	}
	return nil
}

// parseTime reads an RFC 3339 time, in UTC at the microseconds the stores keep.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("year %d out of range", t.Year())
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

func checkText(name, s string, max int) error {
	switch {
	case len(s) > max:
		return badFilter(name, "%s: longer than %d bytes", name, max)
	case !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0:
		return badFilter(name, "%s: not valid UTF-8 text", name)
	}
	return nil
}

func validKind(s string) bool {
	for _, k := range kindNames() {
		if s == k {
			return true
		}
	}
	return false
}

// kindNames are the names of llm's error kinds (the none kind excepted: a served request's
// kind is "").
func kindNames() []string {
	var names []string
	for k := llm.Kind(1); k.String() != "unknown"; k++ {
		names = append(names, k.String())
	}
	return names
}

// clip keeps a bad value short in an error message.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

func badFilter(param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: 400, Param: param, Code: "invalid_filter",
		Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// keyset is a position in the newest-first order: the records after it are older, or as old
// with a smaller id.
type keyset struct {
	Time time.Time
	ID   string
}

const cursorVersion = 1

// encodeCursor is the opaque cursor of k: a version byte, the time in microseconds since the
// epoch (big-endian) and the id, in unpadded base64url.
func encodeCursor(k keyset) string {
	b := make([]byte, 9, 9+len(k.ID))
	b[0] = cursorVersion
	binary.BigEndian.PutUint64(b[1:], uint64(k.Time.UnixMicro()))
	return base64.RawURLEncoding.EncodeToString(append(b, k.ID...))
}

func decodeCursor(s string) (keyset, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return keyset{}, err
	}
	if len(b) < 10 || b[0] != cursorVersion {
		return keyset{}, fmt.Errorf("not a version %d cursor", cursorVersion)
	}
	id := string(b[9:])
	if len(id) > maxIDLen || clean(id) != id {
		return keyset{}, fmt.Errorf("not a request id")
	}
	us := int64(binary.BigEndian.Uint64(b[1:9]))
	t := time.UnixMicro(us).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return keyset{}, fmt.Errorf("time out of range")
	}
	return keyset{Time: t, ID: id}, nil
}
