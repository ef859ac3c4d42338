package mockllm

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

type embeddingsWire struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// vectors decodes the embeddings of a response, float or base64.
func (e embeddingsWire) vectors(t *testing.T) [][]float32 {
	t.Helper()
	var out [][]float32
	for i, d := range e.Data {
		want(t, "index", d.Index, i)
		want(t, "object", d.Object, "embedding")
		var v []float32
		var s string
		if json.Unmarshal(d.Embedding, &s) == nil {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil || len(b)%4 != 0 {
				t.Fatalf("base64 embedding %q: %v", s, err)
			}
			for j := 0; j < len(b); j += 4 {
				v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b[j:])))
			}
		} else if err := json.Unmarshal(d.Embedding, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestEmbeddings(t *testing.T) {
	tests := []struct {
		name   string
		req    map[string]any
		dims   []int
		tokens int
	}{
		{"string", map[string]any{"model": "embed", "input": "hello world"}, []int{8}, 3},
		{"strings", map[string]any{"model": "embed", "input": []string{"a", "bb", "hello world"}}, []int{8, 8, 8}, 5},
		{"tokens", map[string]any{"model": "embed", "input": []int{1, 2, 3}}, []int{8}, 3},
		{"token arrays", map[string]any{"model": "embed", "input": [][]int{{1}, {2, 3}}}, []int{8, 8}, 3},
		{"dimensions", map[string]any{"model": "embed", "input": "x", "dimensions": 3}, []int{3}, 1},
		{"dims wins", map[string]any{"model": "embed?dims=5", "input": "x", "dimensions": 3}, []int{5}, 1},
		{"base64", map[string]any{"model": "embed?dims=16", "input": "x", "encoding_format": "base64"}, []int{16}, 1},
		{"float", map[string]any{"model": "embed", "input": "x", "encoding_format": "float"}, []int{8}, 1},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				resp := postJSON(t.Context(), t, c, base+"/embeddings", jsonBody(tt.req))
				body := readAll(t, resp)
				want(t, "status", resp.StatusCode, 200)
				var e embeddingsWire
				if err := json.Unmarshal(body, &e); err != nil {
					t.Fatal(err)
				}
				want(t, "object", e.Object, "list")
				want(t, "model", e.Model, fmt.Sprint(tt.req["model"]))
				want(t, "usage", [2]int{e.Usage.PromptTokens, e.Usage.TotalTokens}, [2]int{tt.tokens, tt.tokens})
				var dims []int
				for _, v := range e.vectors(t) {
					dims = append(dims, len(v))
					norm := 0.0
					for _, x := range v {
						norm += float64(x) * float64(x)
					}
					if math.Abs(norm-1) > 1e-5 {
						t.Errorf("|v|² = %v, want 1", norm)
					}
				}
				want(t, "dims", dims, tt.dims)
				want(t, "calls", s.Calls(fmt.Sprint(tt.req["model"])), 1)
			})
		}
	}
}

// TestEmbeddingsDeterministic checks a text embeds the same way on any server and in either
// encoding, and different texts or seeds differently.
func TestEmbeddingsDeterministic(t *testing.T) {
	embed := func(model, format string, input any) [][]float32 {
		s := newTestServer()
		c, base, _ := modes[1].start(t, s)
		resp := postJSON(t.Context(), t, c, base+"/embeddings",
			jsonBody(map[string]any{"model": model, "input": input, "encoding_format": format}))
		var e embeddingsWire
		if err := json.Unmarshal(readAll(t, resp), &e); err != nil {
			t.Fatal(err)
		}
		return e.vectors(t)
	}
	a := embed("embed", "float", []string{"cat", "dog", "cat"})
	b := embed("embed", "base64", "dog")
	want(t, "same text", a[0], a[2])
	want(t, "other server, base64", b[0], a[1])
	want(t, "different texts differ", fmt.Sprint(a[0]) != fmt.Sprint(a[1]), true)
	want(t, "seed changes vectors", fmt.Sprint(embed("embed?seed=2", "", "cat")[0]) != fmt.Sprint(a[0]), true)
}

func TestEmbeddingsErrors(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		status     int
		typ, code  string
		retryAfter string
	}{
		{"429", `{"model":"embed?fail=429","input":"x"}`, 429, "requests", "rate_limit_exceeded", "1"},
		{"500", `{"model":"embed?fail=500","input":"x"}`, 500, "server_error", "", ""},
		{"ratelimit", `{"model":"embed?fail=ratelimit&retry=4","input":"x"}`, 429, "requests", "rate_limit_exceeded", "4"},
		{"error", `{"model":"embed?fail=error","input":"x"}`, 500, "server_error", "", ""},
		{"chat script", `{"model":"text","input":"x"}`, 404, "invalid_request_error", "model_not_found", ""},
		{"unknown", `{"model":"text-embedding-3-small","input":"x"}`, 404, "invalid_request_error", "model_not_found", ""},
		{"no input", `{"model":"embed"}`, 400, "invalid_request_error", "", ""},
		{"empty input", `{"model":"embed","input":[]}`, 400, "invalid_request_error", "", ""},
		{"empty string", `{"model":"embed","input":""}`, 400, "invalid_request_error", "", ""},
		{"bad input", `{"model":"embed","input":{"a":1}}`, 400, "invalid_request_error", "", ""},
		{"bad format", `{"model":"embed","input":"x","encoding_format":"int8"}`, 400, "invalid_request_error", "", ""},
		{"bad dimensions", `{"model":"embed","input":"x","dimensions":0}`, 400, "invalid_request_error", "", ""},
		{"no model", `{"input":"x"}`, 400, "invalid_request_error", "", ""},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				resp := postJSON(t.Context(), t, c, base+"/embeddings", tt.body)
				e := decodeError(t, resp)
				want(t, "status", resp.StatusCode, tt.status)
				want(t, "retry-after", resp.Header.Get("Retry-After"), tt.retryAfter)
				want(t, "type code", [2]string{e.Type, e.Code}, [2]string{tt.typ, tt.code})
			})
		}
	}
	s := newTestServer()
	c, base, _ := modes[1].start(t, s)
	model := "embed?fail=503&times=2"
	var got []int
	for range 3 {
		resp := postJSON(t.Context(), t, c, base+"/embeddings", jsonBody(map[string]any{"model": model, "input": "x"}))
		readAll(t, resp)
		got = append(got, resp.StatusCode)
	}
	want(t, "times", got, []int{503, 503, 200})
	want(t, "calls", s.Calls(model), 3)
	resp := postJSON(t.Context(), t, c, base+"/chat/completions", string(chatBody("embed", "x", true, false)))
	want(t, "embed on chat", decodeError(t, resp).Code, "model_not_found")
}
