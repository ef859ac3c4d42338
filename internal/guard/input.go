package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// CheckInput runs the input guardrails of gs on req, in order, and returns the first
// refusal. A masking guardrail changes req in place (the decoded request is the handler's
// own): the text of its messages as text, tool-call arguments as JSON, so they still parse.
func CheckInput(gs []*Guardrail, req *llm.Request) *Refusal {
	for _, g := range gs {
		if g.Stage != Input {
			continue
		}
		if r := g.input(req); r != nil {
			return r
		}
	}
	return nil
}

func (g *Guardrail) refuse(format string, args ...any) *Refusal {
	return &Refusal{Guardrail: g.Name, Stage: g.Stage, Reason: fmt.Sprintf(format, args...), Retry: g.retry}
}

func (g *Guardrail) input(req *llm.Request) *Refusal {
	if g.kind == "max_size" {
		if n := int64(usage.PromptTokens(req)); g.maxTokens > 0 && n > g.maxTokens {
			return g.refuse("the prompt is about %d tokens, over the limit of %d", n, g.maxTokens)
		}
		if n := int64(promptBytes(req)); g.maxBytes > 0 && n > g.maxBytes {
			return g.refuse("the prompt is %d bytes, over the limit of %d", n, g.maxBytes)
		}
		return nil
	}
	if g.mask {
		g.maskInput(req)
		return nil
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		for _, p := range m.Parts {
			if r := g.find(p.Text, "the prompt"); r != nil {
				return r
			}
		}
		for _, tc := range m.ToolCalls {
			if r := g.find(tc.Arguments, "the prompt"); r != nil {
				return r
			}
		}
	}
	return nil
}

// maskInput masks what g finds in the prompt.
func (g *Guardrail) maskInput(req *llm.Request) {
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Parts {
			if m.Parts[j].Type == llm.PartText {
				m.Parts[j].Text = g.rules.Redact(m.Parts[j].Text)
			}
		}
		for j := range m.ToolCalls {
			m.ToolCalls[j].Arguments = g.rules.RedactJSON(m.ToolCalls[j].Arguments)
		}
	}
	req.Native.Mask(g.rules.RedactJSON) // the client's own body, which a target of its wire gets as it came
}

// find judges one text of what (the prompt, the answer) against a terms, regex or pii
// guardrail.
func (g *Guardrail) find(text, what string) *Refusal {
	if text == "" {
		return nil
	}
	switch g.kind {
	case "regex":
		if g.re.MatchString(text) {
			return g.refuse("%s matches a blocked pattern", what)
		}
	case "terms":
		if _, n := g.rules.RedactCount(text); len(n) > 0 {
			return g.refuse("%s contains a blocked term", what)
		}
	case "pii":
		if _, n := g.rules.RedactCount(text); len(n) > 0 {
			kinds := make([]string, 0, len(n))
			for k := range n {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			return g.refuse("%s contains personal data (%s)", what, strings.Join(kinds, ", "))
		}
	}
	return nil
}

// promptBytes is the size of the prompt's text.
func promptBytes(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Arguments)
		}
	}
	return n
}
