// Package embeddings is the OpenAI embeddings client wire (POST /v1/embeddings): Decode
// validates a body and keeps its members for the upstream, Body writes them back, and Usage
// reads the answer's usage without decoding its vectors. The answer itself is passed through
// unchanged; which targets serve it is the server's to decide.
package embeddings

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Decode checks an embeddings body and keeps every member but model, raw and in
// order, for the upstream. Members it does not know are passed on: compatible servers take
// extras (input_type, truncate).
func Decode(body []byte) (string, *llm.Request, error) {
	return DecodePlain(body, "", func(key string, raw json.RawMessage) error {
		switch key {
		case "input":
			return input(raw)
		case "encoding_format":
			var f string
			if json.Unmarshal(raw, &f) != nil || (f != "float" && f != "base64") {
				return oai.Invalid(key, "Invalid value for 'encoding_format'. Supported values are: 'float' and 'base64'.")
			}
		case "dimensions":
			_, err := oai.Int(key, raw, 1, 1<<16)
			return err
		case "user":
			return String(key, raw)
		}
		return nil
	}, "input")
}

// DecodePlain checks the body of a plain endpoint's request (embeddings, moderations,
// images, rerank) and keeps every member but model, raw and in order, for the upstream:
// field checks each member, required are the members it must hold, and model is def when
// the body names none ("": model is required too).
func DecodePlain(body []byte, def string, field func(key string, raw json.RawMessage) error, required ...string) (string, *llm.Request, error) {
	model, req := def, &llm.Request{}
	err := oai.Scan(body, func(key string, raw json.RawMessage) error {
		if key == "model" {
			if err := json.Unmarshal(raw, &model); err != nil {
				return oai.TypeErr(key, "a string")
			}
			return nil
		}
		if err := field(key, raw); err != nil {
			return err
		}
		req.Extra = append(req.Extra, llm.Field{Name: key, Value: raw})
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if model == "" {
		return "", nil, oai.Invalid("model", "Missing required parameter: 'model'.")
	}
	for _, r := range required {
		if !slices.ContainsFunc(req.Extra, func(f llm.Field) bool { return f.Name == r }) {
			return "", nil, oai.Invalid(r, "Missing required parameter: '%s'.", r)
		}
	}
	return model, req, nil
}

// Int checks that the member key is an integer in [lo, hi], written as a number (oai.Int
// also takes "2").
func Int(key string, raw json.RawMessage, lo, hi int) error {
	if len(raw) > 0 && raw[0] == '"' {
		return oai.TypeErr(key, "an integer")
	}
	_, err := oai.Int(key, raw, lo, hi)
	return err
}

// String checks that the member key is a string.
func String(key string, raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return oai.TypeErr(key, "a string")
	}
	return nil
}

// Input checks an input member that is a string, never empty (nil, nil), or an array, whose
// elements it returns; want says what the member may be.
func Input(raw json.RawMessage, want string) ([]json.RawMessage, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, oai.Invalid("input", "Invalid 'input': empty string.")
		}
		return nil, nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, oai.TypeErr("input", want)
	}
	return many, nil
}

// input accepts what the API does: a string, an array of strings, an array of
// tokens, or an array of token arrays, never empty.
func input(raw json.RawMessage) error {
	many, err := Input(raw, "a string, an array of strings, or an array of token arrays")
	if err != nil || many == nil {
		return err
	}
	if len(many) == 0 || len(many) > 2048 {
		return oai.Invalid("input", "Invalid 'input': expected an array of 1 to 2048 items.")
	}
	var ss []string
	var toks []int64
	var arrays [][]int64
	if json.Unmarshal(raw, &ss) != nil && json.Unmarshal(raw, &toks) != nil && json.Unmarshal(raw, &arrays) != nil {
		return oai.TypeErr("input", "a string, an array of strings, or an array of token arrays")
	}
	return nil
}

// Body is the upstream's body of req: the client's members but model, raw and in order (the
// provider sets the model).
func Body(req *llm.Request) []byte {
	b := []byte{'{'}
	for i, f := range req.Extra {
		if i > 0 {
			b = append(b, ',')
		}
		b = oai.AppendString(b, f.Name)
		b = append(b, ':')
		b = append(b, f.Value...)
	}
	return append(b, '}')
}

// Usage reads the usage object of an embeddings answer without decoding its
// vectors (megabytes of numbers): OpenAI writes usage last, and `"usage":` cannot occur in
// the vectors, and elsewhere only escaped inside a string.
func Usage(raw []byte) (llm.Usage, bool) {
	i := bytes.LastIndex(raw, []byte(`"usage":`))
	if i < 0 || (i > 0 && raw[i-1] == '\\') {
		return llm.Usage{}, false
	}
	var u struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
	if json.NewDecoder(bytes.NewReader(raw[i+len(`"usage":`):])).Decode(&u) != nil {
		return llm.Usage{}, false
	}
	return llm.Usage{PromptTokens: u.PromptTokens, TotalTokens: u.TotalTokens}, true
}
