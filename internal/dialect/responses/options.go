package responses

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// wireTool is a Responses tool: a function ({type, name, description, parameters, strict},
// flat, where Chat Completions nests them under "function"), a custom tool (name,
// description, format), a namespace of functions (name, description, tools), or a hosted
// tool (any other type).
type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
	Format      json.RawMessage `json:"format"`
	Tools       json.RawMessage `json:"tools"`
}

// toolRef is what the wire needs to give a call back in the client's terms: the tool's name
// in its namespace, and whether it is a custom tool.
type toolRef struct {
	name, namespace string
	custom          bool
}

// tools decodes the tools into llm terms. strict is kept as the client set it: absent means
// the upstream API's own default. A namespace's functions are flattened to
// llm.FlatName(namespace, name); the wire maps their calls back (toolRef).
func (rr *Request) tools(raw json.RawMessage) error {
	var ts []json.RawMessage
	if err := json.Unmarshal(raw, &ts); err != nil {
		return oai.TypeErr("tools", "an array of tool objects")
	}
	for i, t := range ts {
		if err := rr.tool(fmt.Sprintf("tools[%d]", i), t, ""); err != nil {
			return err
		}
	}
	rr.echo.Tools = compact(raw)
	return nil
}

func (rr *Request) tool(p string, raw json.RawMessage, namespace string) error {
	var t wireTool
	if err := json.Unmarshal(raw, &t); err != nil {
		return oai.TypeErr(p, "a tool object")
	}
	switch t.Type {
	case "":
		return oai.Invalid(p+".type", "Missing required parameter: '%s.type'.", p)
	case "function", "custom":
	case "namespace":
		if namespace != "" {
			return oai.Invalid(p+".type", "Invalid value for '%s.type': a namespace cannot hold a namespace.", p)
		}
		if t.Name == "" {
			return oai.Invalid(p+".name", "Missing required parameter: '%s.name'.", p)
		}
		var inner []json.RawMessage
		if err := json.Unmarshal(t.Tools, &inner); err != nil || len(inner) == 0 {
			return oai.Invalid(p+".tools", "Invalid '%s.tools': expected a non-empty array of tools.", p)
		}
		for j, it := range inner {
			if err := rr.tool(fmt.Sprintf("%s.tools[%d]", p, j), it, t.Name); err != nil {
				return err
			}
		}
		return nil
	default:
		if namespace != "" {
			return oai.Invalid(p+".type", "Invalid value for '%s.type': '%s'. A namespace holds 'function' and 'custom' tools.", p, t.Type)
		}
		// A hosted tool: the Responses upstream validates it; nothing else can run it.
		rr.Req.Tools = append(rr.Req.Tools, llm.Tool{Kind: llm.ToolHosted, Name: t.Type})
		return nil
	}
	if t.Name == "" {
		return oai.Invalid(p+".name", "Missing required parameter: '%s.name'.", p)
	}
	if !oai.ValidToolName(t.Name) {
		return oai.Invalid(p+".name", "Invalid '%s.name': must match ^[a-zA-Z0-9_-]{1,64}$.", p)
	}
	// A flat name over 64 characters is the other wires' limit, not the Responses API's:
	// llm.Tool.Function refuses it for them.
	flat := llm.FlatName(namespace, t.Name)
	lt := llm.Tool{Name: flat, Description: t.Description, Strict: t.Strict, Namespace: namespace}
	if t.Type == "custom" {
		lt.Kind, lt.Strict = llm.ToolCustom, nil
		if len(t.Format) > 0 && !oai.IsNull(t.Format) {
			lt.Format = compact(t.Format)
		}
	} else if len(t.Parameters) > 0 && !oai.IsNull(t.Parameters) {
		lt.Parameters = compact(t.Parameters)
	}
	rr.Req.Tools = append(rr.Req.Tools, lt)
	if namespace != "" || t.Type == "custom" {
		if rr.echo.refs == nil {
			rr.echo.refs = map[string]toolRef{}
		}
		rr.echo.refs[flat] = toolRef{name: t.Name, namespace: namespace, custom: t.Type == "custom"}
	}
	return nil
}

// toolChoice translates a Responses tool_choice into the Chat Completions shape of
// llm.Request: the strings are the same; {"type":"function","name":N} (or "custom") becomes
// {"type":"function","function":{"name":N}}. Hosted-tool and allowed_tools choices have no
// equivalent on other upstreams: only a Responses upstream sees them.
func (rr *Request) toolChoice(raw json.RawMessage) error {
	const key = "tool_choice"
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s != "none" && s != "auto" && s != "required" {
			return oai.Invalid(key, "Invalid value for 'tool_choice': '%s'. Supported values are: 'none', 'auto' and 'required'.", s)
		}
		rr.Req.ToolChoice = compact(raw)
	} else {
		var o struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		}
		if err := json.Unmarshal(raw, &o); err != nil || o.Type == "" {
			return oai.TypeErr(key, "a string or an object with a 'type'")
		}
		switch o.Type {
		case "function", "custom":
			// A custom tool is a function everywhere but on Responses.
			if o.Name == "" {
				return oai.Invalid(key+".name", "Missing required parameter: 'tool_choice.name'.")
			}
			b := append([]byte(`{"type":"function","function":{"name":`), oai.AppendString(nil, llm.FlatName(o.Namespace, o.Name))...)
			rr.Req.ToolChoice = append(b, "}}"...)
		default:
			// A hosted tool or allowed_tools: a Responses upstream gets it unchanged
			// (Request.Native); in llm terms the choice is left to the model.
		}
	}
	rr.echo.ToolChoice = compact(raw)
	return nil
}

// text decodes text.format into the Chat Completions response_format, and passes
// text.verbosity on as Chat Completions' top-level verbosity.
func (rr *Request) text(raw json.RawMessage) error {
	var t struct {
		Format    json.RawMessage `json:"format"`
		Verbosity json.RawMessage `json:"verbosity"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return oai.TypeErr("text", "an object")
	}
	if len(t.Format) > 0 && !oai.IsNull(t.Format) {
		var f struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description *string         `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      *bool           `json:"strict"`
		}
		if err := json.Unmarshal(t.Format, &f); err != nil {
			return oai.TypeErr("text.format", "an object")
		}
		switch f.Type {
		case "text", "json_object":
			rr.Req.ResponseFormat = append(append([]byte(`{"type":`), oai.AppendString(nil, f.Type)...), '}')
		case "json_schema":
			if f.Name == "" {
				return oai.Invalid("text.format.name", "Missing required parameter: 'text.format.name'.")
			}
			if len(f.Schema) == 0 || oai.IsNull(f.Schema) {
				return oai.Invalid("text.format.schema", "Missing required parameter: 'text.format.schema'.")
			}
			b := append([]byte(`{"type":"json_schema","json_schema":{"name":`), oai.AppendString(nil, f.Name)...)
			if f.Description != nil {
				b = append(b, `,"description":`...)
				b = oai.AppendString(b, *f.Description)
			}
			b = append(b, `,"schema":`...)
			b = append(b, compact(f.Schema)...)
			if f.Strict != nil {
				b = append(b, `,"strict":`...)
				b = strconv.AppendBool(b, *f.Strict)
			}
			rr.Req.ResponseFormat = append(b, "}}"...)
		default:
			return oai.Invalid("text.format.type", "Invalid value for 'text.format.type': '%s'. Supported values are: 'text', 'json_object' and 'json_schema'.", f.Type)
		}
	}
	if len(t.Verbosity) > 0 && !oai.IsNull(t.Verbosity) {
		var s string
		if err := json.Unmarshal(t.Verbosity, &s); err != nil {
			return oai.TypeErr("text.verbosity", "a string")
		}
		rr.Req.Extra = append(rr.Req.Extra, llm.Field{Name: "verbosity", Value: compact(t.Verbosity)})
	}
	rr.echo.Text = compact(raw)
	return nil
}

// reasoning passes reasoning.effort on as Chat Completions' reasoning_effort, which the
// other adapters translate. reasoning.summary has no field in llm.Request: it is echoed, not
// sent upstream (docs/responses.md).
func (rr *Request) reasoning(raw json.RawMessage) error {
	var r struct {
		Effort  json.RawMessage `json:"effort"`
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return oai.TypeErr("reasoning", "an object")
	}
	var s string
	if len(r.Summary) > 0 && !oai.IsNull(r.Summary) && json.Unmarshal(r.Summary, &s) != nil {
		return oai.TypeErr("reasoning.summary", "a string")
	}
	if len(r.Effort) > 0 && !oai.IsNull(r.Effort) {
		if err := json.Unmarshal(r.Effort, &s); err != nil {
			return oai.TypeErr("reasoning.effort", "a string")
		}
		rr.Req.Extra = append(rr.Req.Extra, llm.Field{Name: "reasoning_effort", Value: compact(r.Effort)})
	}
	rr.echo.Reasoning = compact(raw)
	return nil
}
