package uistream

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect/chat"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Request is a decoded POST /v1/ui/chat body: the AI SDK's request (id, messages, trigger,
// messageId) plus the model and the sampling fields a frontend may add through the
// transport's body. Other fields are the application's own and are ignored.
type Request struct {
	Model, Chat, Trigger, MessageID string
	History                         *History
	Req                             llm.Request
}

// WritesOn is the id of the assistant message the run writes on, "" for a new one: the last
// message of a continuation (after a client-side tool's result), or the message a
// regeneration replaces.
func (r *Request) WritesOn() string {
	if r.History.LastAssistant != "" || r.Trigger != "regenerate-message" {
		return r.History.LastAssistant
	}
	return r.MessageID
}

// uiChatFields are the Chat Completions fields the body may carry, validated as on
// /v1/chat/completions: tools are how a frontend declares the tools it runs itself.
var uiChatFields = []string{"tools", "tool_choice", "temperature", "top_p", "max_tokens", "max_completion_tokens",
	"stop", "seed", "user"}

// Decode parses and validates a frontend's body: the AI SDK's members, the UIMessage history
// (Messages) and the Chat Completions fields of uiChatFields, checked as chat checks them.
func Decode(body []byte) (*Request, error) {
	if err := oai.ValidUTF8(body); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage // as the gate reads the model: the last duplicate wins
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, oai.Invalid("", "We could not parse the JSON body of your request: %s", oai.JSONMsg(err))
	}
	ur := &Request{}
	str := func(key string, dst *string, required bool) error {
		raw, ok := m[key]
		if !ok || oai.IsNull(raw) {
			if required {
				return oai.Invalid(key, "Missing required parameter: '%s'.", key)
			}
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return oai.TypeErr(key, "a string")
		}
		return nil
	}
	for _, f := range []struct {
		key      string
		dst      *string
		required bool
	}{{"model", &ur.Model, true}, {"id", &ur.Chat, true}, {"trigger", &ur.Trigger, false}, {"messageId", &ur.MessageID, false}} {
		if err := str(f.key, f.dst, f.required); err != nil {
			return nil, err
		}
	}
	if ur.Model == "" {
		return nil, oai.Invalid("model", "Missing required parameter: 'model'.")
	}
	if !ValidChatID(ur.Chat) {
		return nil, oai.Invalid("id", "Invalid 'id': a chat id is 1 to 128 letters, digits, '_', '-', '.' or ':'.")
	}
	switch ur.Trigger {
	case "", "submit-message", "regenerate-message":
	default:
		return nil, oai.Invalid("trigger", "Invalid value for 'trigger': '%s'. Supported values are: 'submit-message' and 'regenerate-message'.", ur.Trigger)
	}
	raw, ok := m["messages"]
	if !ok {
		return nil, oai.Invalid("messages", "Missing required parameter: 'messages'.")
	}
	h, err := Messages(raw)
	if err != nil {
		return nil, err
	}
	ur.History = h
	cr := &chat.Request{}
	for _, k := range uiChatFields {
		if raw, ok := m[k]; ok {
			if err := cr.Field(k, raw); err != nil {
				return nil, err
			}
		}
	}
	ur.Req = cr.Req
	ur.Req.Messages, ur.Req.Stream = h.Messages, true
	if raw, ok := m["metadata"]; ok && !oai.IsNull(raw) {
		var o map[string]any
		if json.Unmarshal(raw, &o) != nil {
			return nil, oai.TypeErr("metadata", "an object")
		}
		ur.Req.Metadata = raw
	}
	return ur, nil
}

// ValidChatID keeps chat ids to what is safe in a URL path segment and a Redis key.
func ValidChatID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return s != "." && s != ".."
}
