package openai

import "encoding/json"

// respEvent is the part of a Responses stream event the adapter reads. One struct serves
// every event type, since the type is known only once the event is decoded; unknown members
// (sequence_number, obfuscation, logprobs, the response's output and tools, ...) are skipped
// unread.
type respEvent struct {
	Type string `json:"type"`
	// Delta is the text of the *.delta events.
	Delta text `json:"delta"`
	// ItemID and OutputIndex name the output item a delta belongs to; servers that omit
	// the id still send the index.
	ItemID       string `json:"item_id"`
	OutputIndex  *int   `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	// Arguments is the whole argument text of response.function_call_arguments.done.
	Arguments text `json:"arguments"`
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

// respItem is an output item: a message, a function call or a reasoning item.
type respItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        text   `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	// Content holds a message's output_text and refusal parts.
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// respResponse is the part of a response object the adapter reads.
type respResponse struct {
	ID                string     `json:"id"`
	Model             string     `json:"model"`
	Error             *wireError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *respUsage `json:"usage"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
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
