package openai

import (
	"bytes"
	"encoding/json"
	"errors"

	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// chunk is the decoder's view of a wire.ChatCompletionChunk: only the members the adapter
// reads, with the reader's types (wire.Text takes what compatible servers send for a string,
// wire.Raw passes logprobs on unread); unknown members (object, created,
// system_fingerprint, obfuscation, x_groq, ...) are skipped unread. It is a view of its own,
// not the writer's type, because decodeFast must decode exactly what encoding/json decodes
// into it (FuzzDecodeFast), and a member it does not read would have to be decoded by both.
// It is decoded into again for every event: reset clears what the last one left.
type chunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wire.Usage  `json:"usage"`
	// Error is set on a provider error inside the stream ({"error": {...}}).
	Error wire.Raw `json:"error"`
}

// head is decoded from the first chunk only, for EvStart: later chunks repeat it.
type head struct {
	ID    string `json:"id"`
	Model string `json:"model"`
}

// wireChoice is the decoder's view of a wire.ChunkChoice.
type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Logprobs     wire.Raw  `json:"logprobs"`
	FinishReason wire.Text `json:"finish_reason"`
}

// wireDelta is the decoder's view of a wire.ChunkDelta: its text members as wire.Text.
type wireDelta struct {
	Content          wire.Text            `json:"content"`
	Refusal          wire.Text            `json:"refusal"`
	Reasoning        wire.Text            `json:"reasoning"`
	ReasoningContent wire.Text            `json:"reasoning_content"`
	ToolCalls        []wire.ToolCallDelta `json:"tool_calls"`
}

func (c *chunk) reset() {
	clear(c.Choices[:cap(c.Choices)]) // Unmarshal appends into the old elements otherwise
	*c = chunk{Choices: c.Choices[:0]}
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
