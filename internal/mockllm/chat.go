package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// chatDialect speaks OpenAI Chat Completions: POST .../chat/completions.
type chatDialect struct{ openaiErrors }

func (chatDialect) parse(_ http.Header, raw []byte) (*request, *reqError) {
	var req openai.ChatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badJSON(err)
	}
	if req.Model == "" {
		return nil, &reqError{http.StatusBadRequest, newAPIError("invalid_request_error", "",
			"you must provide a model parameter")}
	}
	r := &request{model: req.Model, stream: req.Stream}
	if req.N != nil && *req.N > 0 {
		r.n = *req.N
	}
	r.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	for _, m := range req.Messages {
		t := text(m.Content, "text")
		r.promptBytes += len(t)
		if m.Role == "user" {
			r.user = t // the last one wins: echo answers the last user message
		}
		r.afterTool, r.toolText = m.Role == "tool", t
	}
	return r, nil
}

func (chatDialect) serves(sc *script) error { return notEmbeddings(sc) }

func (chatDialect) frames(a *answer) (pre, body [][]byte) { return a.preamble(), a.body() }

func (chatDialect) whole(a *answer) any { return a.completion() }

// inband is a data-only error then [DONE], as OpenAI has been seen to send (go-openai#396;
// testdata/openai-chat-instream-server-error.sse), or for fail=event Groq's shape: a named
// error event and no [DONE] (testdata/groq-chat-instream-error.sse).
func (chatDialect) inband(_ *answer, sc *script, _ int) [][]byte {
	if sc.fail == "event" {
		return [][]byte{append([]byte("event: error\n"), dataFrame(scriptedError(sc, ""))...)}
	}
	return [][]byte{dataFrame(scriptedError(sc, "")), doneFrame}
}

func (chatDialect) last() []byte { return doneFrame }

func (a *answer) chunk(choices ...openai.ChunkChoice) openai.ChatCompletionChunk {
	c := openai.ChatCompletionChunk{ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
		SystemFingerprint: "fp_mockllm", Choices: choices}
	if a.includeUsage {
		c.Usage = json.RawMessage("null")
	}
	if choices == nil {
		c.Choices = []openai.ChunkChoice{}
	}
	return c
}

// preamble is the role chunk of each choice.
func (a *answer) preamble() [][]byte {
	if !a.sc.role {
		return nil
	}
	var out [][]byte
	for i := range a.choices {
		d := openai.ChunkDelta{Role: "assistant", Content: json.RawMessage(`""`)}
		if a.sc.refuse {
			d = openai.ChunkDelta{Role: "assistant", Content: json.RawMessage("null"), Refusal: json.RawMessage(`""`)}
		}
		cc := openai.ChunkChoice{Index: i, Delta: d}
		if a.sc.logprobs {
			cc.Logprobs = json.RawMessage(`{"content":[],"refusal":null}`)
		}
		out = append(out, dataFrame(a.chunk(cc)))
	}
	return out
}

// body is every frame after the preamble: the choices' deltas interleaved round robin, then
// each choice's finish chunk, the usage chunk and [DONE], as the script's end= allows.
func (a *answer) body() [][]byte {
	per := make([][]openai.ChunkChoice, len(a.choices))
	for i, ch := range a.choices {
		per[i] = a.deltas(i, ch)
	}
	var out [][]byte
	for k := 0; ; k++ {
		more := false
		for i := range per {
			if k < len(per[i]) {
				out = append(out, dataFrame(a.chunk(per[i][k])))
				more = true
			}
		}
		if !more {
			break
		}
	}
	if a.sc.end == "nofinish" {
		return out
	}
	for i, ch := range a.choices {
		out = append(out, dataFrame(a.chunk(openai.ChunkChoice{Index: i, FinishReason: &ch.finish})))
	}
	if a.includeUsage {
		c := a.chunk()
		c.Usage = marshal(a.usage)
		out = append(out, dataFrame(c))
	}
	if a.sc.end == "done" {
		out = append(out, doneFrame)
	}
	return out
}

// deltas are the chunk choices of one choice: reasoning, then text (or refusal), then tool
// calls, the first fragment of each call carrying its id and name with empty arguments.
func (a *answer) deltas(i int, ch choice) []openai.ChunkChoice {
	var out []openai.ChunkChoice
	for _, r := range ch.reasoning {
		d := openai.ChunkDelta{ReasoningContent: &r}
		if a.sc.field == "reasoning" {
			d = openai.ChunkDelta{Reasoning: &r}
		}
		out = append(out, openai.ChunkChoice{Index: i, Delta: d})
	}
	for k, t := range ch.content {
		d := openai.ChunkDelta{Content: marshal(t)}
		if a.sc.refuse {
			d = openai.ChunkDelta{Refusal: marshal(t)}
		}
		cc := openai.ChunkChoice{Index: i, Delta: d}
		if a.sc.logprobs {
			cc.Logprobs = a.logprobs([]string{t}, k)
		}
		out = append(out, cc)
	}
	for j, cl := range ch.calls {
		out = append(out, openai.ChunkChoice{Index: i, Delta: openai.ChunkDelta{ToolCalls: []openai.ToolCallDelta{{Index: j,
			ID: cl.id, Type: "function", Function: openai.FunctionDelta{Name: cl.name}}}}})
		for _, f := range cl.frags {
			out = append(out, openai.ChunkChoice{Index: i, Delta: openai.ChunkDelta{ToolCalls: []openai.ToolCallDelta{{Index: j,
				Function: openai.FunctionDelta{Arguments: openai.Text(f)}}}}})
		}
	}
	return out
}

// logprobs is a choice's logprobs object for the tokens starting at token number k; the
// values are made up but deterministic.
func (a *answer) logprobs(toks []string, k int) json.RawMessage {
	lps := make([]openai.TokenLogprob, len(toks))
	for j, t := range toks {
		b := make([]int, len(t))
		for x := range len(t) {
			b[x] = int(t[x])
		}
		lps[j] = openai.TokenLogprob{Token: t, Logprob: -float64((k+j)*37%100+1) / 1000, Bytes: b, TopLogprobs: []struct{}{}}
	}
	field := "content"
	if a.sc.refuse {
		field = "refusal"
	}
	other := map[string]string{"content": "refusal", "refusal": "content"}[field]
	return json.RawMessage(fmt.Sprintf(`{%q:%s,%q:null}`, field, marshal(lps), other))
}

// completion is the non-streamed answer.
func (a *answer) completion() openai.ChatCompletion {
	c := openai.ChatCompletion{ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		SystemFingerprint: "fp_mockllm", Usage: a.usage}
	for i, ch := range a.choices {
		body := strings.Join(ch.content, "")
		m := openai.AssistantMessage{Role: "assistant", Content: &body}
		if a.sc.refuse {
			m.Content, m.Refusal = nil, &body
		} else if body == "" && len(ch.calls) > 0 {
			m.Content = nil
		}
		if len(ch.reasoning) > 0 {
			r := strings.Join(ch.reasoning, "")
			if a.sc.field == "reasoning" {
				m.Reasoning = &r
			} else {
				m.ReasoningContent = &r
			}
		}
		for _, cl := range ch.calls {
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: cl.id, Type: "function",
				Function: openai.FunctionCall{Name: cl.name, Arguments: cl.args}})
		}
		cc := openai.ChatChoice{Index: i, Message: m, FinishReason: ch.finish}
		if a.sc.logprobs {
			cc.Logprobs = a.logprobs(ch.content, 0)
		}
		c.Choices = append(c.Choices, cc)
	}
	return c
}
