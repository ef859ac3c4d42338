package mockllm

import "encoding/json"

// anthropicToolResult reports whether an Anthropic message is a turn of tool results (the
// user turn that answers tool_use blocks), and the text of its last result, for then=.
func anthropicToolResult(role string, content json.RawMessage) (bool, string) {
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"` // a string or text blocks
	}
	if role != "user" || json.Unmarshal(content, &blocks) != nil {
		return false, ""
	}
	found, out := false, ""
	for _, b := range blocks {
		if b.Type == "tool_result" {
			found, out = true, text(b.Content, "text")
		}
	}
	return found, out
}
