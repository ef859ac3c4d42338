package openai

import (
	"bytes"
	"encoding/json"

	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// respEvent is the adapter's view of a Responses stream event (wire.ResponseEvent): the part
// it reads. One struct serves every event type, since the type is known only once the event
// is decoded; unknown members (sequence_number, obfuscation, logprobs, the response's output
// and tools, ...) are skipped unread.
type respEvent struct {
	Type string `json:"type"`
	// Delta is the text of the *.delta events.
	Delta wire.Text `json:"delta"`
	// ItemID and OutputIndex name the output item a delta belongs to; servers that omit
	// the id still send the index.
	ItemID       string `json:"item_id"`
	OutputIndex  *int   `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	// Arguments is the whole argument text of response.function_call_arguments.done.
	Arguments wire.Text `json:"arguments"`
	// Item is the output item of response.output_item.added and .done.
	Item *respItem `json:"item"`
	// Response is the response of response.created, .completed, .incomplete and .failed.
	Response *respResponse `json:"response"`
	// The error event comes in two shapes (DESIGN §10): flat, with code, message and param
	// beside type, and nested under error.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Param   json.RawMessage `json:"param"`
	Error   json.RawMessage `json:"error"`
}

// respItem is the adapter's view of an output item, whatever its type (wire.MessageItem,
// wire.FunctionCallItem, wire.ReasoningItem): the members it reads of each.
type respItem struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Namespace is a namespace tool's, on its function calls.
	Namespace string    `json:"namespace"`
	Arguments wire.Text `json:"arguments"`
	// Input is a custom_tool_call's free-form input.
	Input            wire.Text `json:"input"`
	EncryptedContent string    `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	// Content holds a message's output_text and refusal parts.
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	// raw is the item as it came, compacted, when the adapter does not model its type (a
	// hosted tool's call): it goes to the client whole (llm.EvItem).
	raw []byte
}

// modeledItem reports whether the adapter translates output items of type t; the others
// are carried raw.
func modeledItem(t string) bool {
	switch t {
	case "message", "reasoning", "function_call", "custom_tool_call":
		return true
	}
	return false
}

func (it *respItem) UnmarshalJSON(b []byte) error {
	type plain respItem
	if err := json.Unmarshal(b, (*plain)(it)); err != nil {
		return err
	}
	if !modeledItem(it.Type) {
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			return err
		}
		it.raw = c.Bytes()
	}
	return nil
}

// respResponse is the part of a response object (wire.Response) the adapter reads. Its
// error is a wire.Error, which takes a code that is a number or null as well.
type respResponse struct {
	ID                string                  `json:"id"`
	Model             string                  `json:"model"`
	Error             *wire.Error             `json:"error"`
	IncompleteDetails *wire.IncompleteDetails `json:"incomplete_details"`
	Usage             *wire.ResponseUsage     `json:"usage"`
}

// respHandled reports whether the adapter reads events of type t: such an event that does
// not decode is a protocol failure, while any other event is skipped, as the API adds
// event types over time.
func respHandled(t string) bool {
	switch t {
	case "response.created", "response.output_text.delta", "response.refusal.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.output_item.added", "response.output_item.done",
		"response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}
