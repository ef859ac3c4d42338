package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// chunk is the part of a chat.completion.chunk the adapter reads; unknown members
// (object, created, system_fingerprint, obfuscation, x_groq, ...) are skipped unread. It is
// decoded into again for every event: reset clears what the last one left.
type chunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// Error is set on a provider error inside the stream ({"error": {...}}).
	Error rawJSON `json:"error"`
}

// head is decoded from the first chunk only, for EvStart: later chunks repeat it.
type head struct {
	ID    string `json:"id"`
	Model string `json:"model"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Logprobs     rawJSON   `json:"logprobs"`
	FinishReason text      `json:"finish_reason"`
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

// rawJSON is json.RawMessage without null: null leaves it nil instead of costing a copy of
// "null" per chunk. Otherwise it holds its own copy of the bytes.
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		*r = append(rawJSON(nil), b...)
	}
	return nil
}

// decoder decodes one event's data at a time with a reused json.Decoder: unlike
// json.Unmarshal, it keeps its scanner and error-context buffers from one chunk to the next,
// which were most of the allocations per chunk.
type decoder struct {
	src bytes.Reader
	dec *json.Decoder
	fed int64 // bytes given to dec so far
}

func newDecoder() *decoder {
	d := &decoder{}
	d.dec = json.NewDecoder(&d.src)
	return d
}

// decode decodes data, which must be one JSON value with no surrounding space, into v.
// After an error the decoder is unusable, as is the stream that uses it.
func (d *decoder) decode(data []byte, v any) error {
	d.src.Reset(data)
	d.fed += int64(len(data))
	if err := d.dec.Decode(v); err != nil {
		return err
	}
	if d.dec.InputOffset() != d.fed {
		// A second value in the same event: it must not leak into the next one.
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
