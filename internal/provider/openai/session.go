package openai

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/sluice-gw/sluice/internal/jsonstr"
	"github.com/sluice-gw/sluice/internal/llm"
)

// What crosses to an OpenAI target of a client's prompt caching and thinking (issue 46):
//
//   - prompt_cache_key: the client's own (llm.Request.PromptCacheKey) goes to every upstream
//     as it came, as it did when it passed in Extra. When the client set none but named its
//     conversation (llm.Request.Session: the X-Sluice-Session header, Anthropic
//     metadata.user_id, the user field), OpenAI's own API (kind openai or azure, Config.OpenAI)
//     gets a key derived from it, sessionKey: OpenAI routes requests with one key to the same
//     cache machines, so a conversation's turns hit its cache more often. An OpenAI-compatible
//     server (vLLM, Groq, ...) gets no member it did not ask for: some refuse unknown ones.
//   - Cache breakpoints (cache_control, cachePoint) are never sent: OpenAI caches every
//     prompt's prefix by itself and has no marker, and its API refuses unknown members. They
//     are left out silently and not counted in llm.Usage.CacheDropped: on OpenAI, dropping
//     them is how caching works, not a loss.
//   - A thinking budget (Anthropic thinking.budget_tokens, Gemini thinkingBudget:
//     llm.Request.ThinkingBudget) becomes reasoning_effort (Chat) or reasoning.effort
//     (Responses), effortOf, in place of the Gemini wire's coarser reasoning_effort when the
//     upstream is OpenAI's own and the model is a reasoning model's
//     (reasoningModel: o1, o3, o4, gpt-5, codex by name): gpt-4.1 or gpt-4o answer
//     reasoning_effort with a 400, and on Azure a deployment named otherwise is not known to
//     reason, so it gets none. A budget of 0 (thinking off) sends nothing: "minimal" and
//     "none" are not accepted by every reasoning model.

// sessionKey is the prompt_cache_key derived from a conversation key: stable, short (OpenAI
// takes at most 64 characters), and never the raw value, which may be an end user's id.
func sessionKey(session string) string {
	h := sha256.Sum256([]byte(session))
	return "sluice-" + hex.EncodeToString(h[:16])
}

// effortOf is the reasoning effort that says about what a thinking budget of n tokens says;
// "" for none (0: thinking off; <0: the model decides).
func effortOf(n int) string {
	switch {
	case n <= 0:
		return ""
	case n < 4096:
		return "low"
	case n < 16384:
		return "medium"
	}
	return "high"
}

// derive returns req with the members the adapters write from what the client asked in
// another form (above): prompt_cache_key and reasoning_effort, added to a copy's Extra, which
// both encoders write (the Responses one translates reasoning_effort), or req itself when
// there is nothing to add. A member the client sent itself is never written twice.
func (c *conn) derive(req *llm.Request) *llm.Request {
	var add []llm.Field
	if extra(req, "prompt_cache_key") == nil {
		switch {
		case req.PromptCacheKey != "":
			add = append(add, stringField("prompt_cache_key", req.PromptCacheKey))
		case c.openAI && req.Session != "":
			add = append(add, stringField("prompt_cache_key", sessionKey(req.Session)))
		}
	}
	// A wire that names a budget has no effort of its own (Chat and Responses clients name an
	// effort, never a budget): a reasoning_effort beside a budget is the client wire's coarser
	// translation of it (Gemini's), and the budget, finer, says it here.
	budgeted := false
	if c.openAI && req.ThinkingBudget != nil && extra(req, "reasoning") == nil && reasoningModel(req.Model) {
		if e := effortOf(*req.ThinkingBudget); e != "" {
			add, budgeted = append(add, stringField("reasoning_effort", e)), true
		}
	}
	if len(add) == 0 {
		return req
	}
	r := req.Clone()
	r.Extra = make([]llm.Field, 0, len(req.Extra)+len(add))
	for _, f := range req.Extra {
		if !budgeted || f.Name != "reasoning_effort" {
			r.Extra = append(r.Extra, f)
		}
	}
	r.Extra = append(r.Extra, add...)
	return r
}

// stringField is the member name with the JSON string s.
func stringField(name, s string) llm.Field {
	return llm.Field{Name: name, Value: jsonstr.Append(nil, s)}
}
