package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Scope is who may share an entry.
type Scope string

const (
	// ScopeKey (the default): one virtual key never sees another's answers.
	ScopeKey Scope = "key"
	// ScopeTeam: keys with the same team metadata field share; a key without one is its
	// own team.
	ScopeTeam Scope = "team"
	// ScopeGlobal: every caller of the alias shares.
	ScopeGlobal Scope = "global"
)

// TeamField is the key metadata field that names a key's team under ScopeTeam.
const TeamField = "team"

// Caller is who asks, as the scope sees it: the key's id and metadata ("" and nil with auth
// off, when every caller is the same one).
type Caller struct {
	KeyID    string
	Metadata map[string]string
}

// partition is the part of the key the scope makes: the caller's, or none.
func (s Scope) partition(c Caller) string {
	switch s {
	case ScopeGlobal:
		return "global"
	case ScopeTeam:
		if t := c.Metadata[TeamField]; t != "" {
			return "team:" + t
		}
	}
	return "key:" + c.KeyID
}

// skipped are the top-level fields of a request body that do not change the answer: who
// asks and how it is delivered. A field not listed, modelled or not, is part of the key.
var skipped = map[string]bool{"stream": true, "stream_options": true, "user": true, "metadata": true,
	"request_id": true, "safety_identifier": true, "prompt_cache_key": true, "prompt_cache_retention": true,
	"store": true, "background": true}

// normal is the request as the key hashes it: the whole llm.Request but what does not
// change the answer (the upstream model name, which the chain sets per attempt, and the
// fields of delivery and identity), raw JSON compacted so the spacing of a body does not
// matter. A field added to llm.Request is part of the key until it is taken out here: a
// new field can split the cache, never share a wrong answer.
type normal struct {
	Alias, Partition string
	Request          llm.Request
}

// Key is the cache key of req served by alias for caller under scope: a hex SHA-256, the
// same for two requests that must get the same answer, whichever client wire they came on.
func Key(alias string, scope Scope, caller Caller, req *llm.Request) string {
	r := *req
	r.Model, r.Stream, r.IncludeUsage, r.User, r.Metadata, r.Store = "", false, false, "", nil, nil
	// Who asks and which conversation it continues (issue 46), as user and prompt_cache_key.
	r.Session, r.PromptCacheKey = "", ""
	r.ToolChoice, r.ResponseFormat, r.Extra = compact(req.ToolChoice), compact(req.ResponseFormat), fields(req.Extra)
	if req.Native != nil { // the client's own body: the same fields count, the same way
		n := *req.Native
		n.Body, n.Fields = nativeBody(n.Body), fields(n.Fields)
		r.Native = &n
	}
	b, err := json.Marshal(normal{Alias: alias, Partition: scope.partition(caller), Request: r})
	if err != nil { // raw JSON the decoder let through but the encoder refuses: never shared
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fields are fs without the skipped, their values compacted.
func fields(fs []llm.Field) []llm.Field {
	var out []llm.Field
	for _, f := range fs {
		if n := strings.ToLower(f.Name); !skipped[n] && n != "model" {
			out = append(out, llm.Field{Name: f.Name, Value: compact(f.Value)})
		}
	}
	return out
}

// nativeBody is a client's raw JSON object without the skipped members, its members in
// order of name and compacted; a body that is not an object, compacted.
func nativeBody(b json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(b) == 0 || json.Unmarshal(b, &m) != nil {
		return compact(b)
	}
	for k, v := range m {
		if n := strings.ToLower(k); skipped[n] || n == "model" {
			delete(m, k)
		} else {
			m[k] = compact(v)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return compact(b)
	}
	return out
}

func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// Deterministic reports whether req asks for one answer: temperature 0 or unset (the alias
// opted in to caching, so its provider's default is taken as its answer), or a seed.
// Others are cached only where the alias says nondeterministic: true.
func Deterministic(req *llm.Request) bool {
	return req.Temperature == nil || *req.Temperature <= 0 || req.Seed != nil
}
