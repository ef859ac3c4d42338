package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// The cache_control members the adapter writes: the client's TTL kept, none for the
// provider's default (5 minutes).
var (
	ccDefault = json.RawMessage(`{"type":"ephemeral"}`)
	cc5m      = json.RawMessage(`{"type":"ephemeral","ttl":"5m"}`)
	cc1h      = json.RawMessage(`{"type":"ephemeral","ttl":"1h"}`)
)

// marks is which of a translated request's breakpoints go upstream, with which TTL
// (llm.Request.CachePlan): the last llm.MaxCacheMarks in prompt order, since Anthropic
// refuses a request with more, and a 1h after a shorter one as 5m, as Anthropic requires.
type marks func(*llm.Cache) (string, bool)

// cc is the cache_control of a block whose breakpoint is c: nil when it has none or it is
// left out.
func (k marks) cc(c *llm.Cache) json.RawMessage {
	if k == nil {
		return nil
	}
	ttl, ok := k(c)
	switch {
	case !ok:
		return nil
	case ttl == "1h":
		return cc1h
	case ttl == "5m":
		return cc5m
	}
	return ccDefault
}

// ccKey is what a native body holds once per breakpoint, or more (the text of a message may
// quote it): counting it is how the native path stays cheap under the limit.
var ccKey = []byte(`"cache_control"`)

// trimNative removes the earliest breakpoints of a Messages client's own body (its members
// in m) beyond llm.MaxCacheMarks, in prompt order: tools, system, then each message's
// blocks (a tool_result's content before the tool_result), and returns how many it removed.
// Anthropic answers a request with more than 4 with a 400; the last ones, on the
// conversation, are the ones a multi-turn session needs. Only a body that names
// cache_control more than 4 times is decoded: under the limit, the body goes as it came.
// A top-level cache_control (automatic caching) is the client's and stays.
func trimNative(body []byte, m map[string]json.RawMessage) int {
	if bytes.Count(body, ccKey) <= llm.MaxCacheMarks {
		return 0
	}
	var tools, system, msgs any
	decodeAny(m["tools"], &tools)
	decodeAny(m["system"], &system)
	decodeAny(m["messages"], &msgs)
	var found []map[string]any
	var blocks func(v any)
	blocks = func(v any) {
		list, _ := v.([]any)
		for _, b := range list {
			o, ok := b.(map[string]any)
			if !ok {
				continue
			}
			blocks(o["content"]) // a tool_result's
			if c, ok := o["cache_control"]; ok && c != nil {
				found = append(found, o)
			}
		}
	}
	blocks(tools)
	blocks(system)
	if list, ok := msgs.([]any); ok {
		for _, msg := range list {
			if o, ok := msg.(map[string]any); ok {
				blocks(o["content"])
			}
		}
	}
	drop := len(found) - llm.MaxCacheMarks
	if drop <= 0 {
		return 0
	}
	for _, o := range found[:drop] {
		delete(o, "cache_control")
	}
	for _, f := range []struct {
		key string
		v   any
	}{{"tools", tools}, {"system", system}, {"messages", msgs}} {
		if f.v != nil {
			m[f.key], _ = wire.Marshal(f.v)
		}
	}
	return drop
}

// decodeAny decodes raw into v keeping numbers as they were written (json.Number), so that
// what trimNative encodes again differs only by the marks it removed; absent or invalid raw
// leaves v nil.
func decodeAny(raw json.RawMessage, v *any) {
	if len(raw) == 0 {
		return
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(v) != nil {
		*v = nil
	}
}
