package oai

import (
	"encoding/json"
	"fmt"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Invalid is a 400 invalid_request_error naming the field.
func Invalid(param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Type: "invalid_request_error", Param: param,
		Message: fmt.Sprintf(format, args...)}
}

// IsNull reports whether a field is JSON null, which every optional field accepts as absent.
func IsNull(raw json.RawMessage) bool { return string(raw) == "null" }

// TypeErr names the field and the type it wants.
func TypeErr(param, want string) *llm.Error {
	return Invalid(param, "Invalid type for '%s': expected %s.", param, want)
}

// Int decodes an optional integer field in [lo, hi]; nil for null.
func Int(key string, raw json.RawMessage, lo, hi int) (*int, error) {
	if IsNull(raw) {
		return nil, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, TypeErr(key, "an integer")
	}
	v, err := n.Int64()
	if err != nil {
		return nil, TypeErr(key, "an integer")
	}
	if v < int64(lo) || v > int64(hi) {
		return nil, Invalid(key, "Invalid '%s': %d is out of range [%d, %d].", key, v, lo, hi)
	}
	i := int(v)
	return &i, nil
}

// Float decodes an optional number field in [lo, hi]; nil for null.
func Float(key string, raw json.RawMessage, lo, hi float64) (*float64, error) {
	if IsNull(raw) {
		return nil, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, TypeErr(key, "a number")
	}
	if v < lo || v > hi {
		return nil, Invalid(key, "Invalid '%s': %g is out of range [%g, %g].", key, v, lo, hi)
	}
	return &v, nil
}

// ValidToolName reports whether s is a function name OpenAI accepts: ^[a-zA-Z0-9_-]{1,64}$.
func ValidToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
