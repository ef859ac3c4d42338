// Package translate is what the adapters of non-OpenAI wires share in reading an
// llm.Request, whose fields are in Chat Completions terms: tool_choice and response_format
// (raw JSON), base64 data: URLs, tool arguments as JSON objects, and the 400 errors for a
// request a wire cannot carry. It decides no wire's shape.
package translate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Invalid is the error of provider for a request that is wrong for its wire (a malformed
// image URL, arguments that are not JSON): 400, nothing sent.
func Invalid(provider, param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Param: param,
		Message: provider + ": " + fmt.Sprintf(format, args...)}
}

// Unsupported is the error for a well-formed request asking for what the wire does not have
// (n > 1, logprobs): nothing is sent, and the chain tries a target that may have it.
func Unsupported(provider, param, format string, args ...any) *llm.Error {
	e := Invalid(provider, param, format, args...)
	e.Kind = llm.Unsupported
	return e
}

// CompactOr returns raw compacted, or def when raw is empty, null or not JSON.
func CompactOr(raw json.RawMessage, def string) json.RawMessage {
	var b bytes.Buffer
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" || json.Compact(&b, t) != nil {
		return json.RawMessage(def)
	}
	return b.Bytes()
}

// Object is a tool call's arguments as a compact JSON object ("" is {}); false when they are
// not one (cut by max_tokens, a string).
func Object(args string) (json.RawMessage, bool) {
	t := bytes.TrimSpace([]byte(args))
	if len(t) == 0 {
		return json.RawMessage("{}"), true
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil || b.Bytes()[0] != '{' {
		return nil, false
	}
	return b.Bytes(), true
}

// FormatType is the type of a raw response_format ("json_schema", ...), "" when none.
func FormatType(raw json.RawMessage) string {
	var o struct {
		Type string `json:"type"`
	}
	json.Unmarshal(raw, &o)
	return o.Type
}

// ToolChoice reads a raw Chat tool_choice: mode is "" (none given), "auto", "none",
// "required", "function" (with name), or the unknown value as written (for the caller's
// error).
func ToolChoice(raw json.RawMessage) (mode, name string) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "", ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	var o struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &o) != nil || o.Type != "function" || o.Function.Name == "" {
		return string(raw), ""
	}
	return "function", o.Function.Name
}

// DataURL decodes a base64 data: URL (RFC 2397): its media type, lower-cased, and bytes;
// ok is false when u is not a data: URL, err set when it is one but not base64.
func DataURL(u string) (mediaType string, data []byte, ok bool, err error) {
	if len(u) < 5 || !strings.EqualFold(u[:5], "data:") {
		return "", nil, false, nil
	}
	meta, enc, found := strings.Cut(u[5:], ",")
	if !found || !strings.HasSuffix(strings.ToLower(meta), ";base64") {
		return "", nil, true, fmt.Errorf("an image data: URL must be base64-encoded")
	}
	if data, err = base64.StdEncoding.DecodeString(enc); err != nil {
		return "", nil, true, fmt.Errorf("an image data: URL is not valid base64")
	}
	return strings.ToLower(meta[:len(meta)-len(";base64")]), data, true, nil
}

// Text is the text of parts, joined.
func Text(ps []llm.Part) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Text)
	}
	return b.String()
}
