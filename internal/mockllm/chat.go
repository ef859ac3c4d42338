package mockllm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// answer is what a generating script answers, ready to be written streamed or whole.
type answer struct {
	id, model    string
	created      int64
	sc           *script
	choices      []choice
	usage        usage
	includeUsage bool // the stream carries "usage":null on chunks and a usage chunk
}

type choice struct {
	reasoning []string // deltas
	content   []string // deltas; refusal deltas when sc.refuse
	calls     []call
	finish    string
}

type call struct {
	id, name, args string
	frags          []string
}

// cities feed the default get_weather arguments: call i asks for cities[i mod len].
var cities = []string{"Paris, France", "Tokyo, Japan", "Lima, Peru", "Oslo, Norway"}

func newAnswer(sc *script, req *chatRequest, seq int64, created int64) *answer {
	a := &answer{id: fmt.Sprintf("chatcmpl-mock-%d", seq), model: req.Model, created: created, sc: sc}
	n := sc.n
	if n == 0 && req.N != nil && *req.N > 0 {
		n = min(*req.N, 128)
	}
	n = max(n, 1)
	asked := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	a.includeUsage = sc.usage == "always" || sc.usage == "auto" && asked
	completion, thought := 0, 0
	for c := range n {
		var ch choice
		body := req.lastUser()
		if !sc.echo {
			body = compose(sc.length, sc.seed+uint64(c), sc.say, sc.at)
		}
		think := generate(sc.think, sc.seed+1000+uint64(c))
		ch.reasoning = splitText(think, sc.chunk, sc.chunkWords)
		ch.content = splitText(body, sc.chunk, sc.chunkWords)
		completion += len(body) + len(think)
		thought += len(think)
		for i := range sc.calls {
			cl := call{id: fmt.Sprintf("call_mock_%d_%d", seq, i), name: "get_weather", args: sc.args}
			if sc.toolName != "" {
				cl.name = sc.toolName
			}
			if cl.args == "" {
				cl.args = fmt.Sprintf(`{"location":%q,"unit":"celsius"}`, cities[i%len(cities)])
			}
			if len(sc.cuts) > 0 {
				cl.frags = splitAt(cl.args, sc.cuts)
			} else {
				cl.frags = splitText(cl.args, sc.split, false)
			}
			completion += len(cl.name) + len(cl.args)
			ch.calls = append(ch.calls, cl)
		}
		ch.finish = sc.finish
		if ch.finish == "" {
			ch.finish = "stop"
			if sc.calls > 0 {
				ch.finish = "tool_calls"
			}
		}
		a.choices = append(a.choices, ch)
	}
	a.usage.PromptTokens = req.promptTokens()
	a.usage.CompletionTokens = tokens(completion)
	a.usage.TotalTokens = a.usage.PromptTokens + a.usage.CompletionTokens
	a.usage.CompletionTokensDetails.ReasoningTokens = tokens(thought)
	return a
}

func (a *answer) chunk(choices ...chunkChoice) chunk {
	c := chunk{ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
		SystemFingerprint: "fp_mockllm", Choices: choices}
	if a.includeUsage {
		c.Usage = json.RawMessage("null")
	}
	if choices == nil {
		c.Choices = []chunkChoice{}
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
		d := delta{Role: "assistant", Content: json.RawMessage(`""`)}
		if a.sc.refuse {
			d = delta{Role: "assistant", Content: json.RawMessage("null"), Refusal: json.RawMessage(`""`)}
		}
		cc := chunkChoice{Index: i, Delta: d}
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
	per := make([][]chunkChoice, len(a.choices))
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
		out = append(out, dataFrame(a.chunk(chunkChoice{Index: i, FinishReason: &ch.finish})))
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
func (a *answer) deltas(i int, ch choice) []chunkChoice {
	var out []chunkChoice
	for _, r := range ch.reasoning {
		d := delta{ReasoningContent: &r}
		if a.sc.field == "reasoning" {
			d = delta{Reasoning: &r}
		}
		out = append(out, chunkChoice{Index: i, Delta: d})
	}
	for k, t := range ch.content {
		d := delta{Content: marshal(t)}
		if a.sc.refuse {
			d = delta{Refusal: marshal(t)}
		}
		cc := chunkChoice{Index: i, Delta: d}
		if a.sc.logprobs {
			cc.Logprobs = a.logprobs([]string{t}, k)
		}
		out = append(out, cc)
	}
	for j, cl := range ch.calls {
		idx := j
		out = append(out, chunkChoice{Index: i, Delta: delta{ToolCalls: []toolCall{{Index: &idx,
			ID: cl.id, Type: "function", Function: function{Name: cl.name}}}}})
		for _, f := range cl.frags {
			out = append(out, chunkChoice{Index: i, Delta: delta{ToolCalls: []toolCall{{Index: &idx,
				Function: function{Arguments: f}}}}})
		}
	}
	return out
}

// logprobs is a choice's logprobs object for the tokens starting at token number k; the
// values are made up but deterministic.
func (a *answer) logprobs(toks []string, k int) json.RawMessage {
	lps := make([]logprob, len(toks))
	for j, t := range toks {
		b := make([]int, len(t))
		for x := range len(t) {
			b[x] = int(t[x])
		}
		lps[j] = logprob{Token: t, Logprob: -float64((k+j)*37%100+1) / 1000, Bytes: b, TopLogprobs: []struct{}{}}
	}
	field := "content"
	if a.sc.refuse {
		field = "refusal"
	}
	other := map[string]string{"content": "refusal", "refusal": "content"}[field]
	return json.RawMessage(fmt.Sprintf(`{%q:%s,%q:null}`, field, marshal(lps), other))
}

// completion is the non-streamed answer.
func (a *answer) completion() completion {
	c := completion{ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		SystemFingerprint: "fp_mockllm", Usage: a.usage}
	for i, ch := range a.choices {
		body := strings.Join(ch.content, "")
		m := message{Role: "assistant", Content: marshal(body), Refusal: json.RawMessage("null")}
		if a.sc.refuse {
			m.Content, m.Refusal = json.RawMessage("null"), marshal(body)
		} else if body == "" && len(ch.calls) > 0 {
			m.Content = json.RawMessage("null")
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
			m.ToolCalls = append(m.ToolCalls, toolCall{ID: cl.id, Type: "function",
				Function: function{Name: cl.name, Arguments: cl.args}})
		}
		cc := completionChoice{Index: i, Message: m, FinishReason: ch.finish}
		if a.sc.logprobs {
			cc.Logprobs = a.logprobs(ch.content, 0)
		}
		c.Choices = append(c.Choices, cc)
	}
	return c
}
