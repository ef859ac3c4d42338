package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// chunk is the part of a chat.completion.chunk the adapter reads; unknown members
// (object, created, system_fingerprint, obfuscation, x_groq, ...) are skipped unread. It is
// decoded into again for every event: reset clears what the last one left.
type chunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// Error is set on a provider error inside the stream ({"error": {...}}).
	Error json.RawMessage `json:"error"`
}

// head is decoded from the first chunk only, for EvStart: later chunks repeat it.
type head struct {
	ID    string `json:"id"`
	Model string `json:"model"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Delta        wireDelta       `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason text            `json:"finish_reason"`
}

type wireDelta struct {
	Content          text           `json:"content"`
	Refusal          text           `json:"refusal"`
	Reasoning        text           `json:"reasoning"`
	ReasoningContent text           `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments text   `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (c *chunk) reset() {
	clear(c.Choices[:cap(c.Choices)]) // Unmarshal appends into the old elements otherwise
	*c = chunk{Choices: c.Choices[:0]}
}

// text is a delta string that tolerates what compatible servers send instead of a string:
// null (empty) and an array of content parts (their "text" members joined). Unmarshal hands
// it the raw bytes uncopied, so a plain string costs one allocation.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"':
		s := b[1 : len(b)-1]
		if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			*t = text(s)
			return nil
		}
		return json.Unmarshal(b, (*string)(t))
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s string
		for _, p := range parts {
			s += p.Text
		}
		*t = text(s)
	}
	return nil // null, and anything else: no text
}
