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
// appendDoc writes is what encoding/json writes without HTML escaping, byte for byte
// (TestDocMatchesEncodingJSON, FuzzDoc), and TestDocCoversRecord fails when Record grows a
// field this file does not write. Readers decode it with encoding/json, as before.

// appendDoc appends r as a JSON object to b. r is prepared: its floats are finite (JSON has
// no NaN) and its time is one RFC 3339 can say (year 0 to 9999; prepare refuses others).
func appendDoc(b []byte, r *Record) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, r.ID)
	b = append(b, `,"request_id":`...)
	b = jsonstr.Append(b, r.RequestID)
	b = append(b, `,"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","replica":`...)
	b = jsonstr.Append(b, r.Replica)
	b = append(b, `,"key_id":`...)
	b = jsonstr.Append(b, r.KeyID)
	b = append(b, `,"key_name":`...)
	b = jsonstr.Append(b, r.KeyName)
	b = append(b, `,"key_meta":`...)
	b = appendMeta(b, r.KeyMeta)
	b = append(b, `,"team":`...)
	b = jsonstr.Append(b, r.Team)
	b = append(b, `,"wire":`...)
	b = jsonstr.Append(b, r.Wire)
	b = append(b, `,"method":`...)
	b = jsonstr.Append(b, r.Method)
	b = append(b, `,"path":`...)
	b = jsonstr.Append(b, r.Path)
	b = append(b, `,"alias":`...)
	b = jsonstr.Append(b, r.Alias)
	b = append(b, `,"target":`...)
	b = jsonstr.Append(b, r.Target)
	b = append(b, `,"attempts":`...)
	b = appendList(b, r.Attempts, appendAttempt)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"kind":`...)
	b = jsonstr.Append(b, r.Kind)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	b = append(b, `,"first_event_ms":`...)
	b = appendFloat(b, r.FirstEventMS)
	b = append(b, `,"first_token_ms":`...)
	b = appendFloat(b, r.FirstTokenMS)
	b = append(b, `,"duration_ms":`...)
	b = appendFloat(b, r.DurationMS)
	b = append(b, `,"overhead_ms":`...)
	b = appendFloat(b, r.OverheadMS)
	b = append(b, `,"tokens_in":`...)
	b = strconv.AppendInt(b, int64(r.TokensIn), 10)
	b = append(b, `,"tokens_out":`...)
	b = strconv.AppendInt(b, int64(r.TokensOut), 10)
	b = append(b, `,"tokens_cached":`...)
	b = strconv.AppendInt(b, int64(r.TokensCached), 10)
	b = append(b, `,"tokens_reasoning":`...)
	b = strconv.AppendInt(b, int64(r.TokensReasoning), 10)
	b = append(b, `,"tokens_estimated":`...)
	b = strconv.AppendBool(b, r.TokensEstimated)
	b = append(b, `,"cost_usd":`...)
	b = appendFloat(b, r.CostUSD)
	b = append(b, `,"cache":`...)
	b = jsonstr.Append(b, r.Cache)
	b = append(b, `,"cache_read_tokens":`...)
	b = strconv.AppendInt(b, int64(r.CacheReadTokens), 10)
	b = append(b, `,"cache_write_tokens":`...)
	b = strconv.AppendInt(b, int64(r.CacheWriteTokens), 10)
	b = append(b, `,"cache_write_1h_tokens":`...)
	b = strconv.AppendInt(b, int64(r.CacheWrite1hTokens), 10)
	b = append(b, `,"saved_usd":`...)
	b = appendFloat(b, r.SavedUSD)
	b = append(b, `,"cache_dropped":`...)
	b = strconv.AppendInt(b, int64(r.CacheDropped), 10)
	b = append(b, `,"affinity":`...)
	b = jsonstr.Append(b, r.Affinity)
	b = append(b, `,"redactions":`...)
	b = strconv.AppendInt(b, int64(r.Redactions), 10)
	b = append(b, `,"guardrails":`...)
	b = appendList(b, r.Guardrails, appendGuardrail)
	b = append(b, `,"tools":`...)
	b = appendList(b, r.Tools, appendTool)
	b = append(b, `,"user_agent":`...)
	b = jsonstr.Append(b, r.UserAgent)
	b = append(b, `,"trace_id":`...)
	b = jsonstr.Append(b, r.TraceID)
	b = append(b, `,"error":`...)
	b = jsonstr.Append(b, r.Error)
	b = append(b, `,"capture":`...)
	b = jsonstr.Append(b, r.Capture)
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
	if r.Shadow { // omitempty
		b = append(b, `,"shadow":true`...)
	}
	if r.Similarity != 0 { // omitempty
		b = append(b, `,"similarity":`...)
		b = appendFloat(b, r.Similarity)
	}
	if len(r.Turns) > 0 { // omitempty
		b = append(b, `,"turns":`...)
		b = appendList(b, r.Turns, appendTurn)
	}
	return append(b, '}')
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
