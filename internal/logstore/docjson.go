package logstore

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/internal/jsonstr"
)

// The record's document is written by hand: encoding/json's reflection was some 17% of the
// SQLite writer's CPU, and the writer shares the process's cores with the requests. What
// appendDoc writes is what encoding/json writes without HTML escaping, byte for byte, less
// the record's fields that hold their zero value (TestDocMatchesEncodingJSON, FuzzDoc), and
// TestDocCoversRecord fails when Record grows a field this file does not write. Readers
// decode it with encoding/json, as before, and the documents written before the zeros were
// left out read the same.

// appendDoc appends r as a JSON object to b, leaving out the fields that hold their zero
// value ("", 0, false, null: a reader decodes their absence to the same record, and the
// table's rows are a third smaller, which is what the writer's inserts and sends cost). r
// is prepared: its floats are finite (JSON has no NaN) and its time is one RFC 3339 can
// say (year 0 to 9999; prepare refuses others).
func appendDoc(b []byte, r *Record) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, r.ID)
	b = appendStr(b, `,"request_id":`, r.RequestID)
	b = append(b, `,"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	return appendMembers(b, r)
}

// appendRowDoc appends the document a row stores: r less the fields its columns hold (and
// readers take from them, scanRecord), which are a third of the document. The table's rows
// are then some 40% narrower: bytes every insert copies into the table's pages and the WAL.
// key_meta stays, since its column cannot tell an empty map from none.
func appendRowDoc(b []byte, r Record) []byte {
	r.ID, r.RequestID, r.Time, r.KeyID, r.KeyName, r.Team = "", "", time.Time{}, "", "", ""
	r.Alias, r.Target, r.Status, r.Kind, r.Stream, r.Cache, r.Affinity = "", "", 0, "", false, "", ""
	r.TokensIn, r.TokensOut, r.CacheReadTokens, r.CacheWriteTokens = 0, 0, 0, 0
	r.CostUSD, r.FirstTokenMS, r.SavedUSD = 0, 0, 0
	at := len(b)
	b = appendMembers(append(b, '{'), &r)
	if b[at+1] == ',' { // the first member written: no comma before it
		b = append(b[:at+1], b[at+2:]...)
	}
	return b
}

// appendMembers appends r's members from replica on, each after a comma, and the closing
// brace; those that hold their zero value are left out.
func appendMembers(b []byte, r *Record) []byte {
	b = appendStr(b, `,"replica":`, r.Replica)
	b = appendStr(b, `,"key_id":`, r.KeyID)
	b = appendStr(b, `,"key_name":`, r.KeyName)
	if r.KeyMeta != nil {
		b = append(b, `,"key_meta":`...)
		b = appendMeta(b, r.KeyMeta)
	}
	b = appendStr(b, `,"team":`, r.Team)
	b = appendStr(b, `,"wire":`, r.Wire)
	b = appendStr(b, `,"method":`, r.Method)
	b = appendStr(b, `,"path":`, r.Path)
	b = appendStr(b, `,"alias":`, r.Alias)
	b = appendStr(b, `,"target":`, r.Target)
	b = appendListOf(b, `,"attempts":`, r.Attempts, appendAttempt)
	b = appendInt(b, `,"status":`, r.Status)
	b = appendStr(b, `,"kind":`, r.Kind)
	b = appendTrue(b, `,"stream":`, r.Stream)
	b = appendNum(b, `,"first_event_ms":`, r.FirstEventMS)
	b = appendNum(b, `,"first_token_ms":`, r.FirstTokenMS)
	b = appendNum(b, `,"duration_ms":`, r.DurationMS)
	b = appendNum(b, `,"overhead_ms":`, r.OverheadMS)
	b = appendInt(b, `,"tokens_in":`, r.TokensIn)
	b = appendInt(b, `,"tokens_out":`, r.TokensOut)
	b = appendInt(b, `,"tokens_cached":`, r.TokensCached)
	b = appendInt(b, `,"tokens_reasoning":`, r.TokensReasoning)
	b = appendTrue(b, `,"tokens_estimated":`, r.TokensEstimated)
	b = appendNum(b, `,"cost_usd":`, r.CostUSD)
	b = appendStr(b, `,"cache":`, r.Cache)
	b = appendInt(b, `,"cache_read_tokens":`, r.CacheReadTokens)
	b = appendInt(b, `,"cache_write_tokens":`, r.CacheWriteTokens)
	b = appendInt(b, `,"cache_write_1h_tokens":`, r.CacheWrite1hTokens)
	b = appendNum(b, `,"saved_usd":`, r.SavedUSD)
	b = appendInt(b, `,"cache_dropped":`, r.CacheDropped)
	b = appendStr(b, `,"affinity":`, r.Affinity)
	b = appendInt(b, `,"redactions":`, r.Redactions)
	b = appendListOf(b, `,"guardrails":`, r.Guardrails, appendGuardrail)
	b = appendListOf(b, `,"tools":`, r.Tools, appendTool)
	b = appendStr(b, `,"user_agent":`, r.UserAgent)
	b = appendStr(b, `,"trace_id":`, r.TraceID)
	b = appendStr(b, `,"error":`, r.Error)
	b = appendStr(b, `,"capture":`, r.Capture)
	if c := r.Content; c != nil { // omitempty
		b = append(b, `,"content":{"request":`...)
		b = jsonstr.Append(b, c.Request)
		b = append(b, `,"answer":`...)
		b = jsonstr.Append(b, c.Answer)
		b = append(b, `,"cap":`...)
		b = strconv.AppendInt(b, int64(c.Cap), 10)
		b = append(b, `,"truncated":`...)
		b = strconv.AppendBool(b, c.Truncated)
		b = append(b, '}')
	}
	b = appendTrue(b, `,"shadow":`, r.Shadow)
	b = appendNum(b, `,"similarity":`, r.Similarity)
	if len(r.Turns) > 0 { // omitempty
		b = append(b, `,"turns":`...)
		b = appendList(b, r.Turns, appendTurn)
	}
	return append(b, '}')
}

// appendStr appends the member name (`,"name":`) and s, unless s is "".
func appendStr(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonstr.Append(append(b, name...), s)
}

// appendInt appends the member name and n, unless n is 0.
func appendInt(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), int64(n), 10)
}

// appendNum appends the member name and f, unless f is 0.
func appendNum(b []byte, name string, f float64) []byte {
	if f == 0 {
		return b
	}
	return appendFloat(append(b, name...), f)
}

// appendTrue appends the member name and true, unless v is false.
func appendTrue(b []byte, name string, v bool) []byte {
	if !v {
		return b
	}
	return append(append(b, name...), "true"...)
}

func appendTurn(b []byte, t *Turn) []byte {
	b = append(b, `{"at_ms":`...)
	b = appendFloat(b, t.AtMS)
	b = append(b, `,"ms":`...)
	b = appendFloat(b, t.MS)
	b = append(b, `,"tokens_in":`...)
	b = strconv.AppendInt(b, int64(t.TokensIn), 10)
	b = append(b, `,"tokens_out":`...)
	b = strconv.AppendInt(b, int64(t.TokensOut), 10)
	return append(b, '}')
}

func appendAttempt(b []byte, a *Attempt) []byte {
	b = append(b, `{"target":`...)
	b = jsonstr.Append(b, a.Target)
	b = append(b, `,"kind":`...)
	b = jsonstr.Append(b, a.Kind)
	b = append(b, `,"ms":`...)
	b = appendFloat(b, a.MS)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(a.Status), 10)
	return append(b, '}')
}

func appendGuardrail(b []byte, g *Guardrail) []byte {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, g.Name)
	b = append(b, `,"stage":`...)
	b = jsonstr.Append(b, g.Stage)
	b = append(b, `,"verdict":`...)
	b = jsonstr.Append(b, g.Verdict)
	return append(b, '}')
}

func appendTool(b []byte, t *ToolCall) []byte {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, t.Name)
	b = append(b, `,"server":`...)
	b = jsonstr.Append(b, t.Server)
	b = append(b, `,"ms":`...)
	b = appendFloat(b, t.MS)
	b = append(b, `,"outcome":`...)
	b = jsonstr.Append(b, t.Outcome)
	return append(b, '}')
}

// appendListOf appends the member name and s as a JSON array, unless s is nil.
func appendListOf[T any](b []byte, name string, s []T, each func([]byte, *T) []byte) []byte {
	if s == nil {
		return b
	}
	return appendList(append(b, name...), s, each)
}

// appendList appends s as a JSON array, null when nil (as encoding/json does, and as a
// reader decodes back to nil).
func appendList[T any](b []byte, s []T, each func([]byte, *T) []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, &s[i])
	}
	return append(b, ']')
}

// appendMeta appends m as a JSON object with its keys sorted, null when nil.
func appendMeta(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var small [8]string // a key's metadata is a few fields: sorted without an allocation
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		b = jsonstr.Append(b, m[k])
	}
	return append(b, '}')
}

// appendFloat appends f as encoding/json does: the shortest form that reads back as f, in
// exponent form below 1e-6 and from 1e21, with a one-digit exponent where it has one
// digit. f is finite.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
