package openai

import (
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// keepReasoning is req asking for its reasoning items' encrypted content when the caller
// hands reasoning back in a later round (KeepReasoning) and the upstream keeps nothing
// (store is false, the gateway's default): without it a reasoning item cannot be sent back
// (an id alone is not found when nothing was stored). Only reasoning models accept the
// include ("Encrypted content is not supported with this model" is a 400 otherwise), so it is
// asked for when the request sets a reasoning effort or the model's name is a reasoning
// family's (o1, o3, o4, gpt-5, codex).
func keepReasoning(req *llm.Request) *llm.Request {
	if !req.KeepReasoning || req.Store != nil && *req.Store || slices.Contains(req.Include, includeEncrypted) {
		return req
	}
	if !reasoningModel(req.Model) && extra(req, "reasoning_effort") == nil && extra(req, "reasoning") == nil {
		return req
	}
	r := req.Clone()
	r.Include = append(slices.Clip(req.Include), includeEncrypted)
	return r
}

func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "codex"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}
