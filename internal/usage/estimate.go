package usage

import "github.com/sluice-gw/sluice/internal/llm"

// The estimates count four bytes a token, the rule the relay and the rate limiter use: the
// provider did not say, and an estimate marked as such beats a zero that looks real.

func tokens(bytes int) int { return (bytes + 3) / 4 }

// PromptTokens estimates the prompt of req: the text of its messages, tool calls and
// results, and its tool definitions. Images are not counted.
func PromptTokens(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text)
		}
		n += len(m.Refusal)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
		for _, r := range m.Reasoning {
			n += len(r.Text)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return tokens(n)
}

// CompletionTokens estimates the answer of resp: its text, refusal, reasoning and tool
// calls.
func CompletionTokens(resp *llm.Response) int {
	n := 0
	for _, c := range resp.Choices {
		n += len(c.Text) + len(c.Refusal) + len(c.Reasoning)
		for _, tc := range c.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	return tokens(n)
}

// Of is the usage of a round as the account keeps it: what the provider reported, else an
// estimate marked Estimated. reported says whether a report came (the relay estimates the
// answer of a stream that ended cleanly without one, and leaves the prompt at zero; a
// stream that failed has none). prompt is the prompt's estimate.
func Of(resp *llm.Response, reported bool, prompt int) llm.Usage {
	u := resp.Usage
	if !reported {
		u = llm.Usage{CompletionTokens: CompletionTokens(resp), Estimated: true}
	}
	if u.Estimated && u.PromptTokens == 0 {
		u.PromptTokens = prompt
	}
	if u.Estimated {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}
