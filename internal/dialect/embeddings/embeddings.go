// Package embeddings is the OpenAI embeddings client wire (POST /v1/embeddings): Decode
// validates a body and keeps its members for the upstream, Body writes them back, and Usage
// reads the answer's usage without decoding its vectors. The answer itself is passed through
// unchanged; which targets serve it is the server's to decide.
package embeddings

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Decode checks an embeddings body and keeps every member but model, raw and in
// order, for the upstream. Members it does not know are passed on: compatible servers take
// extras (input_type, truncate).
func Decode(body []byte) (string, *llm.Request, error) {
	var model string
	req := &llm.Request{}
	err := oai.Scan(body, func(key string, raw json.RawMessage) error {
		switch key {
		case "model":
			if err := json.Unmarshal(raw, &model); err != nil {
				return oai.TypeErr(key, "a string")
			}
			return nil
		case "input":
			if err := input(raw); err != nil {
				return err
			}
		case "encoding_format":
			var f string
			if json.Unmarshal(raw, &f) != nil || (f != "float" && f != "base64") {
				return oai.Invalid(key, "Invalid value for 'encoding_format'. Supported values are: 'float' and 'base64'.")
			}
		case "dimensions":
			if _, err := oai.Int(key, raw, 1, 1<<16); err != nil {
				return err
			}
		case "user":
			var u string
			if err := json.Unmarshal(raw, &u); err != nil {
				return oai.TypeErr(key, "a string")
			}
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
	for _, f := range req.Extra {
		if f.Name == "input" {
			return model, req, nil
		}
	}
	return "", nil, oai.Invalid("input", "Missing required parameter: 'input'.")
}

// input accepts what the API does: a string, an array of strings, an array of
// tokens, or an array of token arrays, never empty.
func input(raw json.RawMessage) error {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return oai.Invalid("input", "Invalid 'input': empty string.")
		}
		return nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(raw, &many); err != nil {
		return oai.TypeErr("input", "a string, an array of strings, or an array of token arrays")
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
