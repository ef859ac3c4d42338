package responses

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Request is a decoded POST /v1/responses body: the model asked for, the provider-neutral
// request, and what the Response object echoes back to the client.
type Request struct {
	Model string
	Req   llm.Request
	echo  respEcho
	// native names the members only a Responses upstream can serve (conversation, prompt,
	// stored items, OpenAI files), in the order they came.
	native []string
}

// NativeOnly names the first member of the request that only an OpenAI Responses upstream
// can serve (previous_response_id, conversation, prompt, an item_reference, a file), or "":
// the server keeps such a request to the chain's Responses targets.
func (rr *Request) NativeOnly() string {
	if rr.Req.PreviousResponseID != "" {
		return "previous_response_id"
	}
	return rr.nativeItem()
}

// nativeItem is NativeOnly but for previous_response_id, which the gateway serves itself
// when it keeps state (state.go).
func (rr *Request) nativeItem() string {
	if len(rr.native) > 0 {
		return rr.native[0]
	}
	return ""
}

// respEcho holds the client's values the Response object repeats, compacted so they fit on
// one SSE data line. A nil field takes the API's default when encoded.
type respEcho struct {
	Instructions, MaxOutputTokens, Temperature, TopP, ToolChoice, Tools, Text, Reasoning,
	ParallelToolCalls, Truncation, User, PreviousResponseID, Store json.RawMessage
	// Encrypted: the client asked for reasoning items' encrypted content
	// (include: ["reasoning.encrypted_content"]).
	Encrypted bool
	// refs are the tools whose calls go back under another shape than a plain function
	// call, by their llm name: namespace functions and custom tools.
	refs map[string]toolRef
}

// compact returns raw without insignificant whitespace: raw JSON echoed inside an SSE data
// line must not carry a newline.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw // already checked by the decoder: cannot happen
	}
	return b.Bytes()
}

// Decode parses and validates a Responses body. Fields the gateway cannot honour
// on every upstream (stored prompts, conversations, background mode) are refused rather
// than silently dropped. The body's members are kept as they came (llm.Native.Fields): a
// Responses upstream gets them unchanged, including fields, tools and items the gateway does
// not model, which the other adapters never see (README, "Coding agents").
func Decode(body []byte) (*Request, error) {
	rr := &Request{}
	rr.Req.Native = &llm.Native{Wire: "responses"}
	var input json.RawMessage
	var instructions *string
	err := oai.Scan(body, func(key string, raw json.RawMessage) error {
		rr.Req.Native.Fields = append(rr.Req.Native.Fields, llm.Field{Name: key, Value: raw})
		if key == "input" {
			input = raw
			return nil
		}
		if key == "instructions" && !oai.IsNull(raw) {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return oai.TypeErr(key, "a string")
			}
			instructions, rr.echo.Instructions = &s, compact(raw)
			return nil
		}
		return rr.field(key, raw)
	})
	if err != nil {
		return nil, err
	}
	if rr.Model == "" {
		return nil, oai.Invalid("model", "Missing required parameter: 'model'.")
	}
	if instructions != nil {
		// Instructions are a system message ahead of the input: what every upstream knows.
		rr.Req.Messages = append(rr.Req.Messages, llm.Message{Role: llm.RoleSystem, Plain: true,
			Parts: []llm.Part{{Type: llm.PartText, Text: *instructions}}})
	}
	if len(input) == 0 || oai.IsNull(input) {
		if rr.NativeOnly() == "" {
			return nil, oai.Invalid("input", "Missing required parameter: 'input'.")
		}
		rr.Req.KeySession("")
		return rr, nil
	}
	msgs, native, err := decodeInput(input)
	if err != nil {
		return nil, err
	}
	rr.Req.Messages = append(rr.Req.Messages, msgs...)
	rr.native = append(rr.native, native...)
	rr.Req.KeySession("") // prompt_cache_key, else user; the server's header comes on top
	return rr, nil
}

func (rr *Request) field(key string, raw json.RawMessage) error {
	r, e := &rr.Req, &rr.echo
	if oai.IsNull(raw) && key != "model" {
		return nil // null is the default of every optional field
	}
	switch key {
	case "model":
		if err := json.Unmarshal(raw, &rr.Model); err != nil {
			return oai.TypeErr(key, "a string")
		}
	case "stream":
		if err := json.Unmarshal(raw, &r.Stream); err != nil {
			return oai.TypeErr(key, "a boolean")
		}
	case "store":
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return oai.TypeErr(key, "a boolean")
		}
		r.Store, e.Store = &v, compact(raw)
	case "background":
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return oai.TypeErr(key, "a boolean")
		}
		if v {
			return oai.Invalid(key, "Background responses are not supported by the gateway: stream the response instead.")
		}
	case "max_output_tokens":
		v, err := oai.Int(key, raw, 1, math.MaxInt32)
		if err != nil {
			return err
		}
		// max_completion_tokens, like max_output_tokens, counts reasoning tokens too.
		r.MaxCompletionTokens, e.MaxOutputTokens = v, compact(raw)
	case "temperature":
		v, err := oai.Float(key, raw, 0, 2)
		if err != nil {
			return err
		}
		r.Temperature, e.Temperature = v, compact(raw)
	case "top_p":
		v, err := oai.Float(key, raw, 0, 1)
		if err != nil {
			return err
		}
		r.TopP, e.TopP = v, compact(raw)
	case "top_logprobs", "max_tool_calls":
		// Accepted and not applied: the output carries no logprobs, and the gateway does not
		// run hosted tools.
		if _, err := oai.Int(key, raw, 0, math.MaxInt32); err != nil {
			return err
		}
	case "user", "previous_response_id":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return oai.TypeErr(key, "a string")
		}
		if key == "user" {
			r.User, e.User = s, compact(raw)
		} else {
			r.PreviousResponseID, e.PreviousResponseID = s, compact(raw)
		}
	case "metadata":
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return oai.TypeErr(key, "an object of string values")
		}
		if len(m) > 16 {
			return oai.Invalid(key, "Invalid 'metadata': at most 16 key-value pairs are allowed.")
		}
		r.Metadata = compact(raw)
	case "include":
		if err := json.Unmarshal(raw, &r.Include); err != nil {
			return oai.TypeErr(key, "an array of strings")
		}
		for _, s := range r.Include {
			e.Encrypted = e.Encrypted || s == "reasoning.encrypted_content"
		}
	case "parallel_tool_calls":
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return oai.TypeErr(key, "a boolean")
		}
		e.ParallelToolCalls = compact(raw)
		r.Extra = append(r.Extra, llm.Field{Name: key, Value: e.ParallelToolCalls})
	case "truncation":
		var s string
		if json.Unmarshal(raw, &s) != nil || (s != "auto" && s != "disabled") {
			return oai.Invalid(key, "Invalid value for 'truncation'. Supported values are: 'auto' and 'disabled'.")
		}
		e.Truncation = compact(raw)
	case "prompt_cache_key":
		// Modelled: an OpenAI adapter writes it once, as it came (a Responses upstream gets
		// the body's own member in Native), and it names the conversation (issue 46).
		if err := json.Unmarshal(raw, &r.PromptCacheKey); err != nil {
			return oai.TypeErr(key, "a string")
		}
	case "service_tier", "prompt_cache_retention", "safety_identifier":
		// Chat Completions takes the same fields: passed through.
		r.Extra = append(r.Extra, llm.Field{Name: key, Value: compact(raw)})
	case "stream_options":
		// Only include_obfuscation, which the gateway's own frames never need.
	case "tools":
		return rr.tools(raw)
	case "tool_choice":
		return rr.toolChoice(raw)
	case "text":
		return rr.text(raw)
	case "reasoning":
		return rr.reasoning(raw)
	case "conversation", "prompt":
		// Stored at OpenAI: a Responses upstream gets them in Native.
		rr.native = append(rr.native, key)
	default:
		// A field the gateway does not model (client_metadata, a field newer than the
		// gateway): a Responses upstream gets it in Native, which decides; other targets
		// never see it, since their APIs would refuse what OpenAI accepts.
	}
	return nil
}
