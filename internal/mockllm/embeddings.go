package mockllm

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// embeddingsDialect speaks OpenAI embeddings: POST .../embeddings, answered by the embed
// script (and replay) with deterministic unit vectors, never streamed. The script's HTTP
// faults apply as to any non-streamed request.
type embeddingsDialect struct{ openaiErrors }

// embedRequest is what an embeddings request asks for.
type embedRequest struct {
	inputs []string // the input texts; a token array is its numbers joined by commas
	tokens int      // prompt tokens: a quarter of the text bytes, or the tokens given
	dims   int      // the request's dimensions; 0: not said
	base64 bool
}

// maxInputs is the API's limit on inputs per request; maxDims bounds a vector (the largest
// OpenAI model has 3072).
const (
	maxInputs = 2048
	maxDims   = 4096
)

func (embeddingsDialect) parse(_ http.Header, raw []byte) (*request, *reqError) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badJSON(err)
	}
	invalid := func(msg string) *reqError {
		return &reqError{http.StatusBadRequest, newAPIError("invalid_request_error", "", msg)}
	}
	if req.Model == "" {
		return nil, invalid("you must provide a model parameter")
	}
	if len(req.Input) == 0 || string(req.Input) == "null" {
		return nil, invalid("'input' is a required property")
	}
	e := &embedRequest{base64: req.EncodingFormat == "base64"}
	if f := req.EncodingFormat; f != "" && f != "float" && f != "base64" {
		return nil, invalid(fmt.Sprintf("%q is not one of ['float', 'base64'] - 'encoding_format'", f))
	}
	if req.Dimensions != nil {
		if *req.Dimensions < 1 || *req.Dimensions > maxDims {
			return nil, invalid(fmt.Sprintf("'dimensions' must be from 1 to %d", maxDims))
		}
		e.dims = *req.Dimensions
	}
	many, arrays, ok := inputs(req.Input)
	if !ok {
		return nil, invalid("'input' must be a string, an array of strings, or an array of token arrays")
	}
	for _, s := range many {
		e.inputs = append(e.inputs, s)
		e.tokens += tokens(len(s))
	}
	for _, a := range arrays {
		parts := make([]string, len(a))
		for i, t := range a {
			parts[i] = strconv.Itoa(t)
		}
		e.inputs = append(e.inputs, strings.Join(parts, ","))
		e.tokens += len(a)
	}
	for _, s := range e.inputs {
		if s == "" {
			return nil, invalid("'$.input' is invalid: an input is empty")
		}
	}
	if len(e.inputs) == 0 || len(e.inputs) > maxInputs {
		return nil, invalid(fmt.Sprintf("'$.input' is invalid: want 1 to %d inputs", maxInputs))
	}
	return &request{model: req.Model, single: true, embed: e}, nil
}

// inputs reads an embeddings input: a string, strings, a token array or token arrays. Each
// form decodes into a fresh value: a failed json.Unmarshal may leave a partial one.
func inputs(in json.RawMessage) (texts []string, arrays [][]int, ok bool) {
	var one string
	if json.Unmarshal(in, &one) == nil {
		return []string{one}, nil, true
	}
	if json.Unmarshal(in, &texts) == nil {
		return texts, nil, true
	}
	var toks []int
	if json.Unmarshal(in, &toks) == nil {
		return nil, [][]int{toks}, true
	}
	if json.Unmarshal(in, &arrays) == nil {
		return nil, arrays, true
	}
	return nil, nil, false
}

// serves keeps the embeddings endpoint to embed and replay.
func (embeddingsDialect) serves(sc *script) error {
	if sc.name != "embed" && sc.name != "replay" {
		return fmt.Errorf("%s is not an embedding model (embed is)", sc.name)
	}
	return nil
}

// frames is empty: embeddings are never streamed.
func (embeddingsDialect) frames(*answer) (pre, body [][]byte) { return nil, nil }

func (embeddingsDialect) inband(*answer, *script, int) [][]byte { return nil }

func (embeddingsDialect) last() []byte { return nil }

func (embeddingsDialect) whole(a *answer) any {
	e := a.req.embed
	dims := a.sc.dims
	if dims == 0 {
		dims = e.dims
	}
	if dims == 0 {
		dims = 8
	}
	l := openai.EmbeddingList{Object: "list", Data: []openai.Embedding{}, Model: a.model}
	for i, in := range e.inputs {
		v := vector(in, a.sc.seed, dims)
		var enc any = v
		if e.base64 {
			b := make([]byte, 0, 4*len(v))
			for _, x := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			}
			enc = base64.StdEncoding.EncodeToString(b)
		}
		l.Data = append(l.Data, openai.Embedding{Object: "embedding", Index: i, Embedding: enc})
	}
	l.Usage.PromptTokens, l.Usage.TotalTokens = e.tokens, e.tokens
	return l
}

// vector is a unit vector of dims float32s, a function of the input and the seed alone: the
// same text always embeds the same way, different texts almost never do.
func vector(input string, seed uint64, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(input))
	x := h.Sum64() ^ seed*0x9e3779b97f4a7c15
	v := make([]float64, dims)
	norm := 0.0
	for i := range v {
		x = x*6364136223846793005 + 1442695040888963407  // Knuth's MMIX LCG, as generate
		v[i] = float64(int64(x>>11)-(1<<52)) / (1 << 52) // [-1, 1)
		norm += v[i] * v[i]
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dims)
	for i := range v {
		out[i] = float32(v[i] / max(norm, 1e-12))
	}
	return out
}
