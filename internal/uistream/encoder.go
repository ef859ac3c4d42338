package uistream

import (
	"encoding/json"
	"strconv"

	"github.com/sluice-gw/sluice/internal/jsonstr"
)

// Encoder writes the chunks of one run as SSE frames: "id: <run id>-<n>\ndata: <chunk>\n\n",
// n counting from 1 across the run, so a reader can resume after any frame (Last-Event-ID).
// Every chunk passes the allow-list of the encoder's version. Each frame is handed to out as
// soon as it is complete, in a fresh slice out may keep. Not safe for concurrent use.
type Encoder struct {
	v   Version
	run string
	seq int64
	out func(seq int64, frame []byte)
	buf []byte
	// text and reasoning are the ids of the open parts ("" when none); n counts the parts
	// opened, for fresh ids: a part restarted on another target never shares an id.
	text, reasoning string
	n               int
}

// NewEncoder returns the encoder of run for version v, whose last frame so far was seq (0 for
// a new run).
func NewEncoder(v Version, run string, seq int64, out func(seq int64, frame []byte)) *Encoder {
	return &Encoder{v: v, run: run, seq: seq, out: out, buf: make([]byte, 0, 256)}
}

// Version is the encoder's schema version.
func (e *Encoder) Version() Version { return e.v }

// Seq is the number of the last frame written.
func (e *Encoder) Seq() int64 { return e.seq }

// field is one member of a chunk: a JSON string, or raw JSON (left out when nil).
type field struct {
	name  string
	str   string
	raw   []byte
	isRaw bool
}

func str(name, s string) field        { return field{name: name, str: s} }
func raw(name string, b []byte) field { return field{name: name, raw: b, isRaw: true} }

var jsonTrue = []byte("true")

// chunk writes one chunk of type t with the fields its version allows; a type the version
// does not know is not sent at all.
func (e *Encoder) chunk(t string, fs ...field) {
	allowed := e.v.fields(t)
	if allowed == nil {
		return
	}
	b := e.head()
	b = append(b, `data: {"type":`...)
	b = jsonstr.Append(b, t)
	for _, f := range fs {
		if !allowed[f.name] || (f.isRaw && f.raw == nil) {
			continue
		}
		b = append(b, ',')
		b = jsonstr.Append(b, f.name)
		b = append(b, ':')
		if f.raw != nil {
			b = append(b, f.raw...)
		} else {
			b = jsonstr.Append(b, f.str)
		}
	}
	b = append(b, "}\n\n"...)
	e.emit(b)
}

func (e *Encoder) head() []byte {
	e.seq++
	b := append(e.buf[:0], "id: "...)
	b = append(b, e.run...)
	b = append(b, '-')
	b = strconv.AppendInt(b, e.seq, 10)
	return append(b, '\n')
}

func (e *Encoder) emit(b []byte) {
	e.buf = b
	e.out(e.seq, append([]byte(nil), b...))
}

// Start opens the message: its id and the metadata known at the start (a JSON object).
func (e *Encoder) Start(messageID string, metadata []byte) {
	e.chunk("start", str("messageId", messageID), raw("messageMetadata", metadata))
}

// StartStep and FinishStep frame one round.
func (e *Encoder) StartStep()  { e.chunk("start-step") }
func (e *Encoder) FinishStep() { e.EndParts(); e.chunk("finish-step") }

// Text appends answer text, opening a text part when none is open (and closing an open
// reasoning part: the answer follows the reasoning).
func (e *Encoder) Text(delta string) {
	if delta == "" {
		return
	}
	if e.reasoning != "" {
		e.endReasoning(nil)
	}
	if e.text == "" {
		e.text = e.id("txt_")
		e.chunk("text-start", str("id", e.text))
	}
	e.chunk("text-delta", str("id", e.text), str("delta", delta))
}

// Reasoning appends reasoning text, in its own part.
func (e *Encoder) Reasoning(delta string) {
	if delta == "" {
		return
	}
	if e.text != "" {
		e.endText(nil)
	}
	if e.reasoning == "" {
		e.reasoning = e.id("rsn_")
		e.chunk("reasoning-start", str("id", e.reasoning))
	}
	e.chunk("reasoning-delta", str("id", e.reasoning), str("delta", delta))
}

// EndParts closes the open text and reasoning parts.
func (e *Encoder) EndParts() {
	e.endReasoning(nil)
	e.endText(nil)
}

func (e *Encoder) id(prefix string) string {
	e.n++
	return prefix + strconv.Itoa(e.n)
}

func (e *Encoder) endText(meta []byte) {
	if e.text != "" {
		e.chunk("text-end", str("id", e.text), raw("providerMetadata", meta))
		e.text = ""
	}
}

func (e *Encoder) endReasoning(meta []byte) {
	if e.reasoning != "" {
		e.chunk("reasoning-end", str("id", e.reasoning), raw("providerMetadata", meta))
		e.reasoning = ""
	}
}

// ToolCall sends a whole tool call for the client to run: tool-input-start, then
// tool-input-available with the parsed arguments. Arguments that are not JSON (cut by a token
// limit) are sent as the raw string with tool-input-error where the version has it, else as
// input followed by tool-output-error, so the client never runs a call on broken input.
func (e *Encoder) ToolCall(id, name, args string) { e.toolCall(id, name, args, nil) }

// toolCall sends a whole call with the extra fields flags (tool.go) on each chunk.
func (e *Encoder) toolCall(id, name, args string, flags []field) {
	e.EndParts()
	with := func(fs ...field) []field { return append(fs, flags...) }
	e.chunk("tool-input-start", with(str("toolCallId", id), str("toolName", name))...)
	input := []byte(args)
	if args == "" {
		input = []byte("{}")
	}
	if json.Valid(input) {
		e.chunk("tool-input-available", with(str("toolCallId", id), str("toolName", name), raw("input", input))...)
		return
	}
	const msg = "the model's tool arguments are not valid JSON"
	if e.v.fields("tool-input-error") != nil {
		e.chunk("tool-input-error", with(str("toolCallId", id), str("toolName", name), str("input", args), str("errorText", msg))...)
		return
	}
	e.chunk("tool-input-available", with(str("toolCallId", id), str("toolName", name), str("input", args))...)
	e.chunk("tool-output-error", with(str("toolCallId", id), str("errorText", msg))...)
}

// Metadata sends message metadata (a JSON object); the client merges it into the message's.
func (e *Encoder) Metadata(metadata []byte) {
	e.chunk("message-metadata", raw("messageMetadata", metadata))
}

// Data sends a data part (type "data-"+name); transient parts reach the client's onData only.
func (e *Encoder) Data(name, id string, data []byte, transient bool) {
	fs := []field{raw("data", data)}
	if id != "" {
		fs = append([]field{str("id", id)}, fs...)
	}
	if transient {
		fs = append(fs, raw("transient", jsonTrue))
	}
	e.chunk("data-"+name, fs...)
}

// restartedMeta marks a part abandoned by a restart, for clients without reset-step: the
// client keeps the part (its schema cannot remove one), flagged so that it can hide it and
// the gateway drops it from the history it is sent back.
var restartedMeta = []byte(`{"sluice":{"restarted":true}}`)

// Restart tells the client to drop what the current round streamed: the committed target
// failed (or an output guardrail asked for a retry) and the round starts again on the next
// target, in the same step (DESIGN §8). v7: reset-step. Older versions: the open parts end
// flagged as restarted, then a transient data-restart part (data is its JSON payload).
func (e *Encoder) Restart(data []byte) {
	if e.v.fields("reset-step") != nil {
		e.text, e.reasoning = "", ""
		e.chunk("reset-step")
		return
	}
	e.endReasoning(restartedMeta)
	e.endText(restartedMeta)
	e.Data("restart", "", data, true)
}

// Error sends the terminal error. The AI SDK treats it as final, so a restart never sends it.
func (e *Encoder) Error(text string) {
	e.EndParts()
	e.chunk("error", str("errorText", text))
}

// Finish ends the message: the finish reason where the version has the field, and the final
// metadata (nil: none).
func (e *Encoder) Finish(reason string, metadata []byte) {
	e.EndParts()
	e.chunk("finish", str("finishReason", reason), raw("messageMetadata", metadata))
}

// Abort ends a stopped run.
func (e *Encoder) Abort(reason string) {
	e.chunk("abort", str("reason", reason))
}

// Done writes the last frame, [DONE].
func (e *Encoder) Done() {
	b := e.head()
	b = append(b, "data: [DONE]\n\n"...)
	e.emit(b)
}

// IsDone reports whether frame is the [DONE] frame that ends every run.
func IsDone(frame []byte) bool {
	const tail = "data: [DONE]\n\n"
	return len(frame) >= len(tail) && string(frame[len(frame)-len(tail):]) == tail
}

// FinishReason maps an llm finish reason (Chat Completions terms) to the AI SDK's.
func FinishReason(f string) string {
	switch f {
	case "stop", "":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool-calls"
	case "content_filter":
		return "content-filter"
	}
	return "other"
}
