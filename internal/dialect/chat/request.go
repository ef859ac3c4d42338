package chat

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Request is a decoded POST /v1/chat/completions body: the model asked for, and the request
// for the chain.
type Request struct {
	Model string
	Req   llm.Request
}

// Decode parses and validates a Chat Completions body. Modelled fields are checked for
// type and range; the rest are kept raw, in order, for OpenAI-compatible upstreams.
func Decode(body []byte) (*Request, error) {
	cr := &Request{}
	seen := map[string]bool{}
	err := oai.Scan(body, func(key string, raw json.RawMessage) error {
		seen[key] = true
		return cr.Field(key, raw)
	})
	if err != nil {
		return nil, err
	}
	if cr.Model == "" {
		return nil, oai.Invalid("model", "Missing required parameter: 'model'.")
	}
	if !seen["messages"] {
		return nil, oai.Invalid("messages", "Missing required parameter: 'messages'.")
	}
	if len(cr.Req.Messages) == 0 {
		return nil, oai.Invalid("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1.")
	}
	cr.Req.KeySession("") // prompt_cache_key, else user; the server's header comes on top
	return cr, nil
}

// Field decodes and validates the body field key into the request, or keeps an unmodelled
// one raw in Req.Extra. A frontend's body (the UI wire) carries some of these fields too.
func (cr *Request) Field(key string, raw json.RawMessage) error {
	r := &cr.Req
	switch key {
	case "model":
		if err := json.Unmarshal(raw, &cr.Model); err != nil {
			return oai.TypeErr(key, "a string")
		}
	case "messages":
		return cr.messages(raw)
	case "stream":
		if oai.IsNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, &r.Stream); err != nil {
			return oai.TypeErr(key, "a boolean")
		}
	case "stream_options":
		if oai.IsNull(raw) {
			return nil
		}
		var so struct {
			IncludeUsage *bool `json:"include_usage"`
		}
		if err := json.Unmarshal(raw, &so); err != nil {
			return oai.TypeErr(key, "an object")
		}
		if so.IncludeUsage != nil {
			r.IncludeUsage = *so.IncludeUsage
		}
	case "n":
		v, err := oai.Int(key, raw, 1, 128)
		if err != nil || v == nil {
			return err
		}
		r.N = *v
	case "max_tokens":
		v, err := oai.Int(key, raw, 1, math.MaxInt32)
		r.MaxTokens = v
		return err
	case "max_completion_tokens":
		v, err := oai.Int(key, raw, 1, math.MaxInt32)
		r.MaxCompletionTokens = v
		return err
	case "top_logprobs":
		v, err := oai.Int(key, raw, 0, 20)
		r.TopLogprobs = v
		return err
	case "temperature":
		v, err := oai.Float(key, raw, 0, 2)
		r.Temperature = v
		return err
	case "top_p":
		v, err := oai.Float(key, raw, 0, 1)
		r.TopP = v
		return err
	case "seed":
		if oai.IsNull(raw) {
			return nil
		}
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			return oai.TypeErr(key, "an integer")
		}
		r.Seed = &v
	case "logprobs":
		if oai.IsNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, &r.Logprobs); err != nil {
			return oai.TypeErr(key, "a boolean")
		}
	case "user":
		if oai.IsNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, &r.User); err != nil {
			return oai.TypeErr(key, "a string")
		}
	case "prompt_cache_key":
		// Modelled rather than kept in Extra: an OpenAI adapter writes it once, as the
		// client sent it or derived from the Session when it sent none (issue 46).
		if oai.IsNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, &r.PromptCacheKey); err != nil {
			return oai.TypeErr(key, "a string")
		}
	case "stop":
		return cr.stop(raw)
	case "tools":
		return cr.tools(raw)
	case "tool_choice":
		if oai.IsNull(raw) {
			return nil
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s != "none" && s != "auto" && s != "required" {
				return oai.Invalid(key, "Invalid value for 'tool_choice': '%s'. Supported values are: 'none', 'auto' and 'required'.", s)
			}
		} else {
			var o struct {
				Type     string `json:"type"`
				Function *struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(raw, &o); err != nil || o.Type == "" {
				return oai.TypeErr(key, "a string or an object with a 'type'")
			}
			if o.Type == "function" && (o.Function == nil || o.Function.Name == "") {
				return oai.Invalid(key, "Missing required parameter: 'tool_choice.function.name'.")
			}
		}
		r.ToolChoice = raw
	case "response_format":
		if oai.IsNull(raw) {
			return nil
		}
		var o struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return oai.TypeErr(key, "an object")
		}
		switch o.Type {
		case "text", "json_object", "json_schema":
		default:
			return oai.Invalid("response_format.type", "Invalid value for 'response_format.type': '%s'. Supported values are: 'text', 'json_object' and 'json_schema'.", o.Type)
		}
		r.ResponseFormat = raw
	default:
		r.Extra = append(r.Extra, llm.Field{Name: key, Value: raw})
	}
	return nil
}

func (cr *Request) stop(raw json.RawMessage) error {
	if oai.IsNull(raw) {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		cr.Req.Stop = []string{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return oai.TypeErr("stop", "a string or an array of strings")
	}
	if len(ss) > 4 {
		return oai.Invalid("stop", "Invalid 'stop': at most 4 sequences are allowed.")
	}
	cr.Req.Stop = ss
	return nil
}

func (cr *Request) tools(raw json.RawMessage) error {
	if oai.IsNull(raw) {
		return nil
	}
	var ts []struct {
		Type     string `json:"type"`
		Function *struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			Parameters   json.RawMessage `json:"parameters"`
			Strict       *bool           `json:"strict"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"function"`
		// CacheControl is a breakpoint on the tool's definition (LiteLLM reads it here or
		// in function): not OpenAI's.
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if err := json.Unmarshal(raw, &ts); err != nil {
		return oai.TypeErr("tools", "an array of tool objects")
	}
	for i, t := range ts {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return oai.Invalid(p+".type", "Invalid value for '%s.type': '%s'. Supported values are: 'function'.", p, t.Type)
		}
		if t.Function == nil || t.Function.Name == "" {
			return oai.Invalid(p+".function.name", "Missing required parameter: '%s.function.name'.", p)
		}
		if !oai.ValidToolName(t.Function.Name) {
			return oai.Invalid(p+".function.name", "Invalid '%s.function.name': must match ^[a-zA-Z0-9_-]{1,64}$.", p)
		}
		cc, at := t.CacheControl, p+".cache_control"
		if len(cc) == 0 || oai.IsNull(cc) {
			cc, at = t.Function.CacheControl, p+".function.cache_control"
		}
		mark, err := decodeCache(at, cc)
		if err != nil {
			return err
		}
		cr.Req.Tools = append(cr.Req.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: t.Function.Parameters, Strict: t.Function.Strict, Cache: mark})
	}
	return nil
}
