package chat

import (
	"encoding/json"
)

// mergeLogprobs joins two Chat Completions logprobs objects ({"content":[...],"refusal":[...]})
// by concatenating their arrays, as the SDKs do when they assemble a stream. When the relay
// releases the text of several upstream chunks at once, their logprobs travel together.
func mergeLogprobs(a, b []byte) []byte {
	if len(a) == 0 || string(a) == "null" {
		return b
	}
	if len(b) == 0 || string(b) == "null" {
		return a
	}
	var x, y map[string]json.RawMessage
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return b
	}
	for k, v := range y {
		var xs, ys []json.RawMessage
		if json.Unmarshal(x[k], &xs) == nil && json.Unmarshal(v, &ys) == nil {
			merged, _ := json.Marshal(append(xs, ys...))
			x[k] = merged
			continue
		}
		x[k] = v
	}
	out, err := json.Marshal(x) // encoding/json sorts map keys: deterministic
	if err != nil {
		return b
	}
	return out
}

// joinLogprobs merges the logprobs objects of a choice's chunks into one, for a non-streamed
// answer; nil when there were none.
func joinLogprobs(all []json.RawMessage) json.RawMessage {
	var out []byte
	for _, lp := range all {
		out = mergeLogprobs(out, lp)
	}
	return out
}
