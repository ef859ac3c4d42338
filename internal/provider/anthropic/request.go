package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// Thinking budgets per reasoning_effort: the Messages API takes a token budget, not a level.
// 1024 is the smallest budget the API accepts.
const (
	minBudget    = 1024
	budgetLow    = 1024
	budgetMedium = 4096
	budgetHigh   = 16384
)

// ModelMaxTokens is the max_tokens sent when the request names none, which the Messages API
// requires: 8192 for Claude 4 and later (claude-sonnet-4-5, claude-opus-4-1-...), whose
// output limits are far above it, and 4096 otherwise, which every Claude 3 model accepts.
func ModelMaxTokens(model string) int {
	if claudeMajor(model) >= 4 {
		return 8192
	}
	return 4096
}

// claudeMajor is the major version in a Claude model name: its first numeric segment of one
// or two digits ("claude-3-7-sonnet-20250219" is 3, "claude-opus-4-1" is 4); 0 if none.
func claudeMajor(model string) int {
	for _, seg := range strings.Split(model, "-") {
		if n, err := strconv.Atoi(seg); err == nil && len(seg) <= 2 {
			return n
		}
	}
	return 0
}

// encodeRequest writes the Messages body of req, always streamed, and says how many of its
// cache breakpoints it left out (over llm.MaxCacheMarks: the earliest go). defaultMax is the
// max_tokens to send when the request has none. What cannot be translated without changing
// the answer's meaning is an Invalid *llm.Error (see the package comment for the table).
func encodeRequest(req *llm.Request, defaultMax int) ([]byte, int, error) {
	if e := req.NativeOnly("anthropic"); e != nil { // a Gemini client's cachedContent
		return nil, 0, e
	}
	if req.N > 1 {
		return nil, 0, unsupported("n", "n=%d: Anthropic serves one choice per request", req.N)
	}
	if req.Logprobs {
		return nil, 0, unsupported("logprobs", "logprobs are not available from Anthropic")
	}
	if rfType(req.ResponseFormat) == "json_schema" {
		return nil, 0, unsupported("response_format", "response_format json_schema is not supported for Anthropic targets")
	}
	keep, dropped := req.CachePlan(llm.MaxCacheMarks)
	system, turns, err := translateMessages(req.Messages, keep)
	if err != nil {
		return nil, 0, err
	}
	w := wire.MessagesRequest{Model: req.Model, System: system, Messages: turns, Stream: !req.Plain}
	for i := range req.Tools {
		t, err := req.Tools[i].Function() // custom tools take one string; hosted ones cannot come
		if err != nil {
			return nil, 0, err
		}
		schema := compactOr(t.Parameters, `{"type":"object","properties":{}}`)
		w.Tools = append(w.Tools, wire.Tool{Name: t.Name, Description: t.Description, InputSchema: schema,
			CacheControl: marks(keep).cc(req.Tools[i].Cache)})
	}
	var parallel json.RawMessage
	var effort string
	for _, f := range req.Extra {
		switch f.Name {
		case "parallel_tool_calls":
			parallel = f.Value
		case "reasoning_effort":
			json.Unmarshal(f.Value, &effort)
		case "top_k":
			var k int
			if json.Unmarshal(f.Value, &k) == nil && k > 0 {
				w.TopK = &k
			}
		}
	}
	if len(w.Tools) > 0 {
		// tool_choice without tools is an API error; with none, there is nothing to choose.
		if w.ToolChoice, err = translateToolChoice(req.ToolChoice, string(parallel) == "false"); err != nil {
			return nil, 0, err
		}
	}
	// Anthropic refuses whitespace-only stop sequences; a client's "\n" is dropped rather
	// than failing the request.
	for _, s := range req.Stop {
		if strings.TrimSpace(s) != "" {
			w.StopSequences = append(w.StopSequences, s)
		}
	}
	if req.Temperature != nil {
		t := min(*req.Temperature, 1) // Anthropic's range is 0..1, OpenAI's 0..2
		w.Temperature = &t
	}
	if req.TopP != nil && req.Temperature == nil {
		// Anthropic asks for one of the two, and its newer models refuse both.
		w.TopP = req.TopP
	}
	if req.User != "" {
		w.Metadata = &wire.Metadata{UserID: req.User}
	}
	setTokens(&w, req, defaultMax, effort)
	b, err := wire.Marshal(&w)
	if err != nil {
		return nil, 0, &llm.Error{Kind: llm.Internal, Message: "anthropic: cannot encode the request", Err: err}
	}
	return b, dropped, nil
}

// setTokens sets max_tokens and, when reasoning_effort asks for it, extended thinking.
func setTokens(w *wire.MessagesRequest, req *llm.Request, defaultMax int, effort string) {
	limit := req.MaxTokens
	if limit == nil {
		limit = req.MaxCompletionTokens
	}
	w.MaxTokens = defaultMax
	if limit != nil {
		w.MaxTokens = *limit
	}
	budget := map[string]int{"low": budgetLow, "medium": budgetMedium, "high": budgetHigh}[effort]
	if b := req.ThinkingBudget; b != nil && *b >= 0 {
		// The client's own budget (Gemini's thinkingBudget), over the effort's; -1, the
		// model decides, keeps the effort's.
		budget = *b
		if budget > 0 {
			budget = max(budget, minBudget)
		}
	}
	if w.ToolChoice != nil && (w.ToolChoice.Type == "any" || w.ToolChoice.Type == "tool") {
		budget = 0 // thinking refuses a forced tool; the client's tool_choice is the contract
	}
	if budget == 0 {
		return
	}
	if limit != nil {
		// OpenAI's limit counts reasoning tokens too, and so does max_tokens: the client's
		// cap holds, and the budget must stay below it.
		budget = min(budget, *limit-1)
		if budget < minBudget {
			return
		}
	} else {
		w.MaxTokens = budget + defaultMax // room for the answer after the thinking
	}
	w.Thinking = &wire.Thinking{Type: "enabled", BudgetTokens: budget}
	// With thinking on, the API refuses temperature and top_k, and top_p below 0.95.
	w.Temperature, w.TopK = nil, nil
	if w.TopP != nil && *w.TopP < 0.95 {
		w.TopP = nil
	}
}

// translateToolChoice maps a Chat tool_choice (raw, validated by the server) to Anthropic's;
// disableParallel is parallel_tool_calls: false.
func translateToolChoice(raw json.RawMessage, disableParallel bool) (*wire.ToolChoice, error) {
	tc := &wire.ToolChoice{Type: "auto"}
	var s string
	if len(raw) > 0 && json.Unmarshal(raw, &s) != nil {
		var o struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &o) != nil || o.Type != "function" || o.Function.Name == "" {
			return nil, unsupported("tool_choice", "tool_choice %s has no Anthropic equivalent", raw)
		}
		tc.Type, tc.Name = "tool", o.Function.Name
	}
	switch s {
	case "required":
		tc.Type = "any"
	case "none":
		// {"type":"none"} takes no other field.
		return &wire.ToolChoice{Type: "none"}, nil
	}
	if !disableParallel && len(raw) == 0 {
		return nil, nil // the API's default is auto: say nothing
	}
	tc.DisableParallelToolUse = disableParallel
	return tc, nil
}

// rfType is the type of a raw response_format, "" when none.
func rfType(raw json.RawMessage) string {
	var o struct {
		Type string `json:"type"`
	}
	json.Unmarshal(raw, &o)
	return o.Type
}

// compactOr returns raw compacted, or def when raw is empty or null.
func compactOr(raw json.RawMessage, def string) json.RawMessage {
	var b bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" || json.Compact(&b, raw) != nil {
		return json.RawMessage(def)
	}
	return b.Bytes()
}
