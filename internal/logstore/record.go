package logstore

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Record is one request as the log keeps it (issue 33, "1. The request log"). The JSON
// names are the contract of the admin API and the console. A Record never holds a provider
// credential, a virtual key or an admin token: the gateway builds it from what it already
// shows the client, and captured content after redaction.
type Record struct {
	// ID is the record's own id, made by the gateway (time-ordered, unique in the store):
	// GET /admin/logs/{id} reads it, and the X-Sluice-Record-Id header gives it to the client.
	// Records written before issue 47 have the client's X-Request-Id here.
	ID string `json:"id"`
	// RequestID is the X-Request-Id the client got: its own when it sent a valid one, else
	// ID. Any number of records may share one (a client's retry, or two teams choosing the
	// same id): ?request_id= lists them (issue 47). Records written before issue 47 read ID.
	RequestID string `json:"request_id"`
	// Time is when the request came in, UTC; the store keeps microseconds.
	Time    time.Time `json:"time"`
	Replica string    `json:"replica"`

	KeyID   string            `json:"key_id"`
	KeyName string            `json:"key_name"`
	KeyMeta map[string]string `json:"key_meta"`
	// Team is the key's team (issue 37), "" for none.
	Team string `json:"team"`

	// Wire is the client wire: chat, responses, messages, embeddings, ui, mcp, models...
	Wire   string `json:"wire"`
	Method string `json:"method"`
	Path   string `json:"path"`
	// Alias is the model the client asked for; Target the "provider/model" that served it.
	Alias    string    `json:"alias"`
	Target   string    `json:"target"`
	Attempts []Attempt `json:"attempts"`

	Status int `json:"status"`
	// Kind is the error kind (llm.Kind's name), "" when served.
	Kind   string `json:"kind"`
	Stream bool   `json:"stream"`

	FirstEventMS float64 `json:"first_event_ms"`
	FirstTokenMS float64 `json:"first_token_ms"`
	DurationMS   float64 `json:"duration_ms"`
	OverheadMS   float64 `json:"overhead_ms"`

	TokensIn        int     `json:"tokens_in"`
	TokensOut       int     `json:"tokens_out"`
	TokensCached    int     `json:"tokens_cached"`
	TokensReasoning int     `json:"tokens_reasoning"`
	TokensEstimated bool    `json:"tokens_estimated"`
	CostUSD         float64 `json:"cost_usd"`
	// Cache is the response cache's outcome: hit, miss, bypass, coalesced or "".
	Cache string `json:"cache"`

	// The provider's prompt cache (issue 46), not the gateway's response cache above.
	// CacheReadTokens are prompt tokens the provider read from its cache (TokensCached is
	// the older name of the same count, kept for the readers of the first records);
	// CacheWriteTokens were written to it, CacheWrite1hTokens of them with the 1-hour
	// lifetime. All are part of TokensIn. Records written before issue 46 hold 0.
	CacheReadTokens    int `json:"cache_read_tokens"`
	CacheWriteTokens   int `json:"cache_write_tokens"`
	CacheWrite1hTokens int `json:"cache_write_1h_tokens"`
	// SavedUSD is what the prompt cache saved against the input price (usage.Saved): the
	// reads' discount minus the writes' premium, so negative for a turn that wrote a cache
	// it has not read yet.
	SavedUSD float64 `json:"saved_usd"`
	// CacheDropped counts the client's cache breakpoints the adapter left out (over the
	// provider's limit, or on a block the target cannot mark).
	CacheDropped int `json:"cache_dropped"`
	// Affinity is what conversation affinity did: "" (none), new, kept or moved.
	Affinity string `json:"affinity"`

	Redactions int         `json:"redactions"`
	Guardrails []Guardrail `json:"guardrails"`
	Tools      []ToolCall  `json:"tools"`

	UserAgent string `json:"user_agent"`
	TraceID   string `json:"trace_id"`
	// Error is the public error text the client got, "" when served.
	Error string `json:"error"`
	// Capture is "metadata" or "content": what the alias or key asked the log to keep.
	Capture string   `json:"capture"`
	Content *Content `json:"content,omitempty"`

	// Shadow marks the record of a shadow call (issue 49): the alias's shadow target was
	// asked the same request after the client's answer was complete, and its answer went
	// nowhere but here. Such a record has Wire "shadow", no key and no team (its cost is not
	// the key's), and RequestID the request's. Similarity is its answer's similarity to the
	// client's, 0 to 1 (shadow.Similarity: the Jaccard index of their word sets).
	Shadow     bool    `json:"shadow,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	// Turns are the responses of a Realtime session (issue 48), in order; none for any other
	// request. The session's Attempts are its upstream's connect, its tokens the turns' sum.
	Turns []Turn `json:"turns,omitempty"`
}

// Turn is one response of a Realtime session: when it began (AtMS after the record's
// Time), how long it took, and its tokens.
type Turn struct {
	AtMS      float64 `json:"at_ms"`
	MS        float64 `json:"ms"`
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
}

// Attempt is one try of a target in the fallback chain.
type Attempt struct {
	Target string `json:"target"`
	// Kind is the outcome's error kind, "" when the attempt served the request.
	Kind   string  `json:"kind"`
	MS     float64 `json:"ms"`
	Status int     `json:"status"`
}

// Guardrail is one guardrail's verdict.
type Guardrail struct {
	Name    string `json:"name"`
	Stage   string `json:"stage"`
	Verdict string `json:"verdict"`
}

// ToolCall is one server-side tool call.
type ToolCall struct {
	Name    string  `json:"name"`
	Server  string  `json:"server"`
	MS      float64 `json:"ms"`
	Outcome string  `json:"outcome"`
}

// Content is what capture: content keeps, after redaction: the request's messages and the
// answer as the client saw it, each cut at Cap bytes (Truncated says one was).
type Content struct {
	Request   string `json:"request"`
	Answer    string `json:"answer"`
	Cap       int    `json:"cap"`
	Truncated bool   `json:"truncated"`
}

// maxIDLen bounds a request id: longer ones are a client's mistake, not an id.
const maxIDLen = 256

// prepare returns r as the store keeps it: time in UTC at microseconds (PostgreSQL's
// precision, so a keyset read back matches what was written), and every string valid
// UTF-8 without NUL (PostgreSQL refuses both in text, and one bad record would fail its
// whole batch forever). The caller's slices and maps are not changed.
func prepare(r Record) (Record, error) {
	if r.ID == "" || len(r.ID) > maxIDLen {
		return r, errorf("a record needs an id of 1 to %d bytes, got %d", maxIDLen, len(r.ID))
	}
	if r.RequestID == "" {
		r.RequestID = r.ID // none given: the record's id is the one the client got
	}
	if len(r.RequestID) > maxIDLen {
		return r, errorf("record %q has a request id of %d bytes, more than %d", r.ID, len(r.RequestID), maxIDLen)
	}
	if r.Time.IsZero() {
		return r, errorf("record %q has no time", r.ID)
	}
	r.Time = r.Time.UTC().Truncate(time.Microsecond)
	if y := r.Time.Year(); y < 0 || y > 9999 {
		return r, errorf("record %q has a time RFC 3339 cannot write: year %d", r.ID, y) // as encoding/json refuses it
	}
	// JSON has no NaN or infinity: one would fail the batch at every try.
	for _, p := range []*float64{&r.FirstEventMS, &r.FirstTokenMS, &r.DurationMS, &r.OverheadMS, &r.CostUSD, &r.SavedUSD, &r.Similarity} {
		*p = finite(*p)
	}
	for _, p := range []*string{&r.ID, &r.RequestID, &r.Replica, &r.KeyID, &r.KeyName, &r.Team, &r.Wire, &r.Method, &r.Path,
		&r.Alias, &r.Target, &r.Kind, &r.Cache, &r.Affinity, &r.UserAgent, &r.TraceID, &r.Error, &r.Capture} {
		*p = clean(*p)
	}
	if r.KeyMeta != nil {
		m := make(map[string]string, len(r.KeyMeta))
		for k, v := range r.KeyMeta {
			m[clean(k)] = clean(v)
		}
		r.KeyMeta = m
	}
	if r.Attempts != nil {
		a := make([]Attempt, len(r.Attempts))
		for i, x := range r.Attempts {
			x.Target, x.Kind, x.MS = clean(x.Target), clean(x.Kind), finite(x.MS)
			a[i] = x
		}
		r.Attempts = a
	}
	if r.Guardrails != nil {
		g := make([]Guardrail, len(r.Guardrails))
		for i, x := range r.Guardrails {
			x.Name, x.Stage, x.Verdict = clean(x.Name), clean(x.Stage), clean(x.Verdict)
			g[i] = x
		}
		r.Guardrails = g
	}
	if r.Tools != nil {
		t := make([]ToolCall, len(r.Tools))
		for i, x := range r.Tools {
			x.Name, x.Server, x.Outcome, x.MS = clean(x.Name), clean(x.Server), clean(x.Outcome), finite(x.MS)
			t[i] = x
		}
		r.Tools = t
	}
	if r.Turns != nil {
		t := make([]Turn, len(r.Turns))
		for i, x := range r.Turns {
			x.AtMS, x.MS = finite(x.AtMS), finite(x.MS)
			t[i] = x
		}
		r.Turns = t
	}
	if r.Content != nil {
		c := *r.Content
		c.Request, c.Answer = clean(c.Request), clean(c.Answer)
		r.Content = &c
	}
	return r, nil
}

// clean makes s valid UTF-8 without NUL, replacing what is not with U+FFFD.
func clean(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// day is the UTC midnight that starts t's day: the unit of partitions and of retention.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
