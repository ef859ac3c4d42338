package mockllm

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// request is what a script needs from a request, whatever its dialect: each dialect's parse
// fills it from its own JSON.
type request struct {
	model        string
	stream       bool
	n            int    // choices asked for (Chat's n); 0: not said
	single       bool   // the dialect has no n: one choice, whatever n= says
	includeUsage bool   // Chat's stream_options.include_usage
	user         string // the text of the last user message, what echo answers
	promptBytes  int    // the prompt's text: messages, system, instructions
	responses    *responsesEcho
	embed        *embedRequest
	// afterTool: the conversation ends with a tool result, whose text is toolText (then=).
	afterTool bool
	toolText  string
}

// answer is what a generating script answers, ready for a dialect to write streamed or whole.
type answer struct {
	id, model    string // id: Chat's; the other dialects derive theirs from seq
	seq          int64
	created      int64
	sc           *script
	req          *request
	choices      []choice
	usage        openai.Usage
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

func newAnswer(sc *script, req *request, seq int64, created int64) *answer {
	a := &answer{id: fmt.Sprintf("chatcmpl-mock-%d", seq), model: req.model, seq: seq, created: created,
		sc: sc, req: req}
	n := sc.n
	if n == 0 && req.n > 0 {
		n = min(req.n, 128)
	}
	n = max(n, 1)
	if req.single {
		n = 1
	}
	a.includeUsage = sc.usage == "always" || sc.usage == "auto" && req.includeUsage
	completion, thought := 0, 0
	calls, answered := sc.calls, sc.then != "" && req.afterTool
	if answered {
		calls = 0 // a tool answered: the model answers with text (then=)
	}
	for c := range n {
		var ch choice
		body := req.user
		switch {
		case answered && sc.then == "echo":
			body = "The tool answered: " + req.toolText
		case answered:
			body = generate(cmp.Or(sc.length, 64), sc.seed+uint64(c))
		case !sc.echo:
			body = compose(sc.length, sc.seed+uint64(c), sc.say, sc.at)
		}
		think := generate(sc.think, sc.seed+1000+uint64(c))
		budget := limit{left: sc.max * 4, on: sc.max > 0}
		think, body = budget.take(think), budget.take(body)
		ch.reasoning = splitText(think, sc.chunk, sc.chunkWords)
		ch.content = splitText(body, sc.chunk, sc.chunkWords)
		completion += len(body) + len(think)
		thought += len(think)
		for i := range calls {
			if budget.on && budget.left == 0 {
				budget.cut = true // no room left for this call at all
				break
			}
			cl := call{id: fmt.Sprintf("call_mock_%d_%d", seq, i), name: "get_weather", args: sc.args}
			if sc.toolName != "" {
				names := strings.Split(sc.toolName, ",") // call i takes the i-th name, in turn
				cl.name = names[i%len(names)]
			}
			if cl.args == "" {
				cl.args = fmt.Sprintf(`{"location":%q,"unit":"celsius"}`, cities[i%len(cities)])
			}
			cl.args = budget.take(cl.args)
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
			if budget.cut {
				ch.finish = "length"
			} else if calls > 0 {
				ch.finish = "tool_calls"
			}
		}
		a.choices = append(a.choices, ch)
	}
	a.usage.PromptTokens = tokens(req.promptBytes)
	a.usage.CompletionTokens = tokens(completion)
	a.usage.TotalTokens = a.usage.PromptTokens + a.usage.CompletionTokens
	a.usage.CompletionTokensDetails.ReasoningTokens = tokens(thought)
	return a
}

// limit is the byte budget of max=: reasoning, text and tool arguments take from it in that
// order, as a model's output runs into max_tokens.
type limit struct {
	left    int
	on, cut bool
}

// take returns as much of s as the budget allows, never cutting inside a rune.
func (l *limit) take(s string) string {
	if !l.on || len(s) <= l.left {
		l.left -= min(len(s), l.left)
		return s
	}
	end := l.left
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	l.left, l.cut = 0, true
	return s[:end]
}
