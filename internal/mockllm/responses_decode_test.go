package mockllm

import (
	"encoding/json"
	"testing"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// respEvent is the union of the Responses stream events the tests read.
type respEvent struct {
	Type           string          `json:"type"`
	SequenceNumber *int            `json:"sequence_number"`
	Response       *respObject     `json:"response"`
	ItemID         string          `json:"item_id"`
	OutputIndex    *int            `json:"output_index"`
	Item           json.RawMessage `json:"item"`
	Delta          string          `json:"delta"`
	Text           *string         `json:"text"`
	Refusal        *string         `json:"refusal"`
	Arguments      *string         `json:"arguments"`
	Code           *string         `json:"code"`
	Error          *struct {
		Code string `json:"code"`
	} `json:"error"`
}

type respObject struct {
	ID                string                    `json:"id"`
	Object            string                    `json:"object"`
	Status            string                    `json:"status"`
	Model             string                    `json:"model"`
	Output            []json.RawMessage         `json:"output"`
	Usage             *openai.ResponseUsage     `json:"usage"`
	IncompleteDetails *openai.IncompleteDetails `json:"incomplete_details"`
	Error             *openai.ResponseError     `json:"error"`
	Instructions      *string                   `json:"instructions"`
	Store             bool                      `json:"store"`
}

type respItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Status           string `json:"status"`
	Name             string `json:"name"`
	CallID           string `json:"call_id"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Content          []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []openai.SummaryPart `json:"summary"`
}

// respResult is a Responses stream accumulated as a client does.
type respResult struct {
	summary, text, refusal string
	calls                  []string // name(arguments)
	items                  []respItem
	terminal               *respObject // the response of the last response.* event
	terminalType           string
	errCode                string // the error event's code
	errFlat                bool
}

// decodeResponses checks a stream's grammar (sequence numbers 0, 1, ...; items added, filled
// and done in output order; the .done texts equal to the deltas; the terminal response
// holding the done items) and accumulates it.
func decodeResponses(t *testing.T, events []sseEvent) respResult {
	t.Helper()
	var r respResult
	open := map[string]int{} // item id -> output index, while open
	acc := map[string]string{}
	for i, ev := range events {
		var e respEvent
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("event %d %q: %v", i, ev.data, err)
		}
		if e.Type != ev.name {
			t.Errorf("event %d: event: %s, data type %s", i, ev.name, e.Type)
		}
		if e.SequenceNumber == nil || *e.SequenceNumber != i {
			t.Errorf("event %d %s: sequence_number %v", i, e.Type, e.SequenceNumber)
		}
		if r.terminalType == "response.completed" || r.terminalType == "response.failed" {
			t.Errorf("event %d %s after %s", i, e.Type, r.terminalType)
		}
		if e.ItemID != "" {
			if idx, ok := open[e.ItemID]; !ok || e.OutputIndex == nil || *e.OutputIndex != idx {
				t.Errorf("event %d %s: item %s not open at output_index %v", i, e.Type, e.ItemID, e.OutputIndex)
			}
		}
		switch e.Type {
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
			if e.Response == nil || e.Response.Object != "response" {
				t.Fatalf("event %d %s: no response object", i, e.Type)
			}
			r.terminal, r.terminalType = e.Response, e.Type
		case "response.output_item.added":
			var it respItem
			json.Unmarshal(e.Item, &it)
			if e.OutputIndex == nil || *e.OutputIndex != len(r.items) || len(open) != 0 {
				t.Errorf("event %d: item added at %v with %d items done and %v open", i, e.OutputIndex, len(r.items), open)
			}
			open[it.ID] = len(r.items)
		case "response.output_item.done":
			var it respItem
			json.Unmarshal(e.Item, &it)
			if _, ok := open[it.ID]; !ok {
				t.Errorf("event %d: item %s done, not open", i, it.ID)
			}
			delete(open, it.ID)
			r.items = append(r.items, it)
			if it.Type == "function_call" {
				r.calls = append(r.calls, it.Name+"("+it.Arguments+")")
			}
		case "response.reasoning_summary_text.delta":
			r.summary += e.Delta
			acc[e.ItemID] += e.Delta
		case "response.output_text.delta":
			r.text += e.Delta
			acc[e.ItemID] += e.Delta
		case "response.refusal.delta":
			r.refusal += e.Delta
			acc[e.ItemID] += e.Delta
		case "response.function_call_arguments.delta":
			acc[e.ItemID] += e.Delta
		case "response.reasoning_summary_text.done", "response.output_text.done", "response.refusal.done",
			"response.function_call_arguments.done":
			done := e.Text
			if e.Refusal != nil {
				done = e.Refusal
			}
			if e.Arguments != nil {
				done = e.Arguments
			}
			if done == nil || *done != acc[e.ItemID] {
				t.Errorf("event %d %s: got %v, want the deltas %q", i, e.Type, done, acc[e.ItemID])
			}
		case "error":
			r.errFlat = e.Code != nil
			if e.Code != nil {
				r.errCode = *e.Code
			} else if e.Error != nil {
				r.errCode = e.Error.Code
			}
		}
	}
	if r.terminal != nil && r.terminalType != "response.failed" && r.terminalType != "response.in_progress" {
		if len(r.terminal.Output) != len(r.items) {
			t.Errorf("terminal output: %d items, want the %d done", len(r.terminal.Output), len(r.items))
		}
	}
	return r
}
