package guard

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/llm"
)

// CheckOutput runs the output guardrails of gs on the complete response of a round, in
// order, and returns the first refusal. req is the request of the round: its
// response_format says whether the answer must be JSON.
func CheckOutput(gs []*Guardrail, req *llm.Request, resp *llm.Response) *Refusal {
	var format *responseFormat // decoded once, when a json_schema guardrail needs it
	for _, g := range gs {
		if g.Stage != Output {
			continue
		}
		var r *Refusal
		switch g.kind {
		case "max_size":
			r = g.size(resp)
		case "json_schema":
			if format == nil {
				format = decodeFormat(req)
			}
			r = g.json(format, resp)
		default:
			r = g.scan(resp)
		}
		if r != nil {
			return r
		}
	}
	return nil
}

// scan judges every text of the answer a client would see: text, refusal, reasoning, tool
// call arguments.
func (g *Guardrail) scan(resp *llm.Response) *Refusal {
	for _, c := range resp.Choices {
		for _, t := range []string{c.Text, c.Refusal, c.Reasoning} {
			if r := g.find(t, "the answer"); r != nil {
				return r
			}
		}
		for _, tc := range c.ToolCalls {
			if r := g.find(tc.Arguments, "the answer"); r != nil {
				return r
			}
		}
	}
	return nil
}

func (g *Guardrail) size(resp *llm.Response) *Refusal {
	if n := int64(resp.Usage.CompletionTokens); g.maxTokens > 0 && n > g.maxTokens {
		return g.refuse("the answer is %d tokens, over the limit of %d", n, g.maxTokens)
	}
	n := 0
	for _, c := range resp.Choices {
		n += len(c.Text) + len(c.Refusal) + len(c.Reasoning)
		for _, tc := range c.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	if g.maxBytes > 0 && int64(n) > g.maxBytes {
		return g.refuse("the answer is %d bytes, over the limit of %d", n, g.maxBytes)
	}
	return nil
}

// json judges the text of each choice as JSON: against the guardrail's schema when it has
// one, else as response_format asks (a JSON object, or its json_schema); a request that asks
// for text passes. A choice that answers with tool calls or a refusal only has no JSON to
// judge.
func (g *Guardrail) json(f *responseFormat, resp *llm.Response) *Refusal {
	if g.schema == nil && !f.json {
		return nil
	}
	for _, c := range resp.Choices {
		if c.Text == "" && (len(c.ToolCalls) > 0 || c.Refusal != "") {
			continue
		}
		if !json.Valid([]byte(c.Text)) {
			return g.refuse("the answer is not valid JSON")
		}
		switch {
		case g.schema != nil:
			if r := g.validate(g.schema, c.Text); r != nil {
				return r
			}
		case f.err != nil:
			return g.refuse("the request's response_format schema cannot be used: %s", f.err)
		case f.schema != nil:
			if r := g.validate(f.schema, c.Text); r != nil {
				return r
			}
		default: // json_object
			if t := bytes.TrimLeft([]byte(c.Text), " \t\r\n"); len(t) == 0 || t[0] != '{' {
				return g.refuse("the answer is not a JSON object")
			}
		}
	}
	return nil
}
