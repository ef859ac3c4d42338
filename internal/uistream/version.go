package uistream

import (
	"fmt"
	"sort"
)

// Version is the UI message stream schema a client parses with: the major version of its `ai`
// npm package. The wire (protocol v1) is the same; the chunk types and fields each accepts are
// not.
type Version uint8

const (
	// V7 is ai@7 (checked against 7.0.173): loose objects, reset-step, finish.finishReason,
	// abort.reason.
	V7 Version = iota
	// V6 is ai@6 (checked against 6.0.326): loose objects, finishReason and abort.reason, no
	// reset-step.
	V6
	// V5 is ai@5 (checked against 5.0.0): strict objects, so no finishReason, no abort.reason,
	// no tool-input-error, no reset-step.
	V5
)

// Header is the request header in which a client announces an older schema.
const Header = "X-Sluice-Ui-Protocol"

// ParseVersion reads the header's value: "" is V7.
func ParseVersion(s string) (Version, error) {
	switch s {
	case "", "v7":
		return V7, nil
	case "v6":
		return V6, nil
	case "v5":
		return V5, nil
	}
	return V7, fmt.Errorf("unknown UI message stream protocol %q: want v5, v6 or v7", s)
}

func (v Version) String() string { return [...]string{"v7", "v6", "v5"}[v] }

// DataType is the allow-list's key for every data part: the schemas accept any type that
// starts with "data-".
const DataType = "data-*"

// allow lists, per version, the chunk types the encoder may send and their fields, as the
// `ai` package's uiMessageChunkSchema declares them (only the types the gateway uses). A field
// the version does not list is left out of the chunk; a type it does not list is not sent.
var allow = func() [3]map[string]map[string]bool {
	set := func(fs ...string) map[string]bool {
		m := map[string]bool{}
		for _, f := range fs {
			m[f] = true
		}
		return m
	}
	v5 := map[string]map[string]bool{
		"start":                 set("messageId", "messageMetadata"),
		"start-step":            set(),
		"finish-step":           set(),
		"text-start":            set("id", "providerMetadata"),
		"text-delta":            set("id", "delta", "providerMetadata"),
		"text-end":              set("id", "providerMetadata"),
		"reasoning-start":       set("id", "providerMetadata"),
		"reasoning-delta":       set("id", "delta", "providerMetadata"),
		"reasoning-end":         set("id", "providerMetadata"),
		"tool-input-start":      set("toolCallId", "toolName", "providerExecuted", "dynamic"),
		"tool-input-available":  set("toolCallId", "toolName", "input", "providerExecuted", "providerMetadata", "dynamic"),
		"tool-output-available": set("toolCallId", "output", "providerExecuted", "dynamic"),
		"tool-output-error":     set("toolCallId", "errorText", "providerExecuted", "dynamic"),
		DataType:                set("id", "data", "transient"),
		"message-metadata":      set("messageMetadata"),
		"error":                 set("errorText"),
		"finish":                set("messageMetadata"),
		"abort":                 set(),
	}
	v6 := map[string]map[string]bool{}
	for t, fs := range v5 {
		v6[t] = set()
		for f := range fs {
			v6[t][f] = true
		}
	}
	v6["finish"]["finishReason"] = true
	v6["abort"]["reason"] = true
	v6["tool-input-error"] = set("toolCallId", "toolName", "input", "providerExecuted", "providerMetadata", "dynamic", "errorText")
	v7 := map[string]map[string]bool{}
	for t, fs := range v6 {
		v7[t] = set()
		for f := range fs {
			v7[t][f] = true
		}
	}
	v7["reset-step"] = set()
	return [3]map[string]map[string]bool{V7: v7, V6: v6, V5: v5}
}()

// fields returns the fields version v allows on chunk type t; nil when it does not allow t.
func (v Version) fields(t string) map[string]bool {
	if len(t) > 5 && t[:5] == "data-" {
		t = DataType
	}
	return allow[v][t]
}

// AllowList returns, for each version, each chunk type the encoder may send with its fields
// sorted (data parts under DataType), for conformance tests that check a real client's view.
func AllowList() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, v := range []Version{V5, V6, V7} {
		m := map[string][]string{}
		for t, fs := range allow[v] {
			l := []string{"type"}
			for f := range fs {
				l = append(l, f)
			}
			sort.Strings(l[1:])
			m[t] = l
		}
		out[v.String()] = m
	}
	return out
}
