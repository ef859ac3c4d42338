package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// decodeInput turns a Responses input (a string, or a list of items) into messages. Items of
// one assistant turn become one assistant message: its text, the function calls that follow
// it, and the reasoning items that precede them (handed back to the provider that wrote
// them).
func decodeInput(raw json.RawMessage) ([]llm.Message, []string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []llm.Message{{Role: llm.RoleUser, Plain: true, Parts: []llm.Part{{Type: llm.PartText, Text: s}}}}, nil, nil
	}
	items, err := oai.Elements(raw)
	if err != nil {
		return nil, nil, oai.TypeErr("input", "a string or an array of input items")
	}
	if len(items) == 0 {
		return nil, nil, oai.Invalid("input", "Invalid 'input': empty array. Expected an array with minimum length 1.")
	}
	var b inputBuilder
	for i, it := range items {
		if err := b.item(fmt.Sprintf("input[%d]", i), it); err != nil {
			return nil, nil, err
		}
	}
	// Reasoning that no assistant output follows has nothing to travel with: it is dropped.
	return b.msgs, b.native, nil
}

type inputBuilder struct {
	msgs []llm.Message
	// native names what only a Responses upstream can serve (stored items, OpenAI files).
	native []string
	// reasoning waits for the assistant output it belongs to.
	reasoning []llm.Reasoning
}

// turn returns the assistant message the next output item joins: the last message when it
// is an assistant turn, else a new one. Pending reasoning joins it.
func (b *inputBuilder) turn(extend bool) *llm.Message {
	if n := len(b.msgs); !extend || n == 0 || b.msgs[n-1].Role != llm.RoleAssistant {
		b.msgs = append(b.msgs, llm.Message{Role: llm.RoleAssistant})
	}
	m := &b.msgs[len(b.msgs)-1]
	m.Reasoning = append(m.Reasoning, b.reasoning...)
	b.reasoning = nil
	return m
}

func (b *inputBuilder) item(p string, raw json.RawMessage) error {
	var w wire.InputItem // every field an input item may carry; its type decides which apply
	if err := json.Unmarshal(raw, &w); err != nil {
		return oai.Invalid(p, "Invalid type for '%s': expected an input item object with string fields.", p)
	}
	if w.Type == "" && w.Role != "" {
		w.Type = "message" // EasyInputMessage: {role, content} without a type
	}
	switch w.Type {
	case "message":
		return b.message(p, &w)
	case "function_call":
		if w.CallID == "" || w.Name == "" || w.Arguments == nil {
			return oai.Invalid(p, "Missing required parameter: '%s.call_id', '%s.name' or '%s.arguments'.", p, p, p)
		}
		m := b.turn(true)
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: w.CallID, Name: llm.FlatName(w.Namespace, w.Name), Arguments: *w.Arguments})
	case "custom_tool_call":
		if w.CallID == "" || w.Name == "" || w.Input == nil {
			return oai.Invalid(p, "Missing required parameter: '%s.call_id', '%s.name' or '%s.input'.", p, p, p)
		}
		m := b.turn(true)
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: w.CallID, Name: w.Name, Arguments: llm.CustomArgs(*w.Input)})
	case "function_call_output", "custom_tool_call_output":
		if w.CallID == "" {
			return oai.Invalid(p+".call_id", "Missing required parameter: '%s.call_id'.", p)
		}
		parts, plain, err := outputParts(p+".output", w.Output)
		if err != nil {
			return err
		}
		b.msgs = append(b.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: w.CallID, Parts: parts, Plain: plain})
	case "reasoning":
		texts := make([]string, len(w.Summary))
		for i, s := range w.Summary {
			texts[i] = s.Text
		}
		r := llm.Reasoning{ID: w.ID, Text: strings.Join(texts, "\n\n"), Encrypted: w.EncryptedContent}
		if openAIEncrypted(r.Encrypted) {
			// OpenAI wrote it (Wire, so that every adapter of another format drops the block).
			// Only an OpenAI Responses target reads it, and it gets the items as they came
			// (llm.Native): another adapter that did not check Wire would hand it on as its
			// own signature, which its upstream refuses (state.go), so it goes no further.
			r.Encrypted, r.Wire = "", "responses"
		}
		// Other encrypted content is a signature another provider wrote that the gateway
		// handed to this client as encrypted_content (a Claude target's thinking): which
		// provider, the item does not say, so Wire stays "" and the adapter of the target
		// decides.
		b.reasoning = append(b.reasoning, r)
	case "item_reference":
		// An item stored by a Responses upstream: only it can resolve the reference.
		b.native = append(b.native, p)
	case "":
		return oai.Invalid(p+".type", "Missing required parameter: '%s.type'.", p)
	default:
		// A hosted tool's call or output (web_search_call, local_shell_call, mcp_call,
		// compaction, ...): a Responses upstream gets it in Native; the other targets, which
		// cannot run it, get the conversation without it.
	}
	return nil
}

func (b *inputBuilder) message(p string, w *wire.InputItem) error {
	role := llm.Role(w.Role)
	switch role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleSystem, llm.RoleDeveloper:
	case "":
		return oai.Invalid(p+".role", "Missing required parameter: '%s.role'.", p)
	default:
		return oai.Invalid(p+".role", "Invalid value for '%s.role': '%s'. Supported values are: 'user', 'assistant', 'system' and 'developer'.", p, w.Role)
	}
	var m llm.Message
	if len(w.Content) == 0 || oai.IsNull(w.Content) {
		return oai.Invalid(p+".content", "Missing required parameter: '%s.content'.", p)
	}
	var s string
	native := len(b.native)
	if json.Unmarshal(w.Content, &s) == nil {
		m.Parts, m.Plain = []llm.Part{{Type: llm.PartText, Text: s}}, true
	} else if err := b.contentParts(p+".content", role, w.Content, &m); err != nil {
		return err
	}
	if role != llm.RoleAssistant {
		if len(m.Parts) == 0 && len(b.native) == native {
			return oai.Invalid(p+".content", "Invalid '%s.content': empty array. Expected an array with minimum length 1.", p)
		}
		m.Role = role
		b.msgs = append(b.msgs, m)
		return nil
	}
	t := b.turn(false)
	t.Parts, t.Plain, t.Refusal = m.Parts, m.Plain, m.Refusal
	return nil
}

// contentParts decodes a message's content parts: input_text everywhere, input_image,
// input_file and input_audio in user messages, output_text and refusal in assistant
// messages (output items sent back).
func (b *inputBuilder) contentParts(p string, role llm.Role, raw json.RawMessage, m *llm.Message) error {
	var ws []wire.InputPart
	if err := json.Unmarshal(raw, &ws); err != nil {
		return oai.TypeErr(p, "a string or an array of content parts")
	}
	for j, w := range ws {
		pp := fmt.Sprintf("%s[%d]", p, j)
		switch {
		case w.Type == "input_text" || (w.Type == "output_text" && role == llm.RoleAssistant):
			if w.Text == nil {
				return oai.Invalid(pp+".text", "Missing required parameter: '%s.text'.", pp)
			}
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartText, Text: *w.Text})
		case w.Type == "refusal" && role == llm.RoleAssistant:
			if w.Refusal == nil {
				return oai.Invalid(pp+".refusal", "Missing required parameter: '%s.refusal'.", pp)
			}
			m.Refusal += *w.Refusal
		case w.Type == "input_image" && role == llm.RoleUser:
			if w.ImageURL == "" {
				if w.FileID != "" {
					b.native = append(b.native, pp+".file_id") // an OpenAI file: its upstream's
					continue
				}
				return oai.Invalid(pp+".image_url", "Missing required parameter: '%s.image_url'.", pp)
			}
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartImage, URL: w.ImageURL, Detail: w.Detail})
		case w.Type == "input_file" && role == llm.RoleUser:
			f, err := oai.FilePart(pp, w.FileData, w.FileURL, w.FileID, w.Filename)
			if err != nil {
				return err
			}
			m.Parts = append(m.Parts, f)
		case w.Type == "input_audio" && role == llm.RoleUser:
			a, err := oai.AudioPart(pp, w.InputAudio)
			if err != nil {
				return err
			}
			m.Parts = append(m.Parts, a)
		case w.Type == "input_file" || w.Type == "input_audio":
			b.native = append(b.native, pp) // outside a user message: only a Responses upstream reads it
		default:
			return oai.Invalid(pp+".type", "Invalid value for '%s.type': '%s' in a %s message.", pp, w.Type, role)
		}
	}
	return nil
}

// outputParts decodes a function call's output: a string, or input_text and input_image
// parts (Codex's view_image answers with one). Other parts (input_file) reach a Responses
// upstream in Native; the other targets get the text and images.
func outputParts(p string, raw json.RawMessage) ([]llm.Part, bool, error) {
	if len(raw) == 0 || oai.IsNull(raw) {
		return nil, false, oai.Invalid(p, "Missing required parameter: '%s'.", p)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []llm.Part{{Type: llm.PartText, Text: s}}, true, nil
	}
	var ws []wire.InputPart
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, false, oai.TypeErr(p, "a string or an array of content parts")
	}
	parts := make([]llm.Part, 0, len(ws))
	for j, w := range ws {
		pp := fmt.Sprintf("%s[%d]", p, j)
		switch {
		case w.Type == "input_text" && w.Text != nil:
			parts = append(parts, llm.Part{Type: llm.PartText, Text: *w.Text})
		case w.Type == "input_image" && w.ImageURL != "":
			parts = append(parts, llm.Part{Type: llm.PartImage, URL: w.ImageURL, Detail: w.Detail})
		case w.Type == "input_image" || w.Type == "input_file":
		case w.Type == "":
			return nil, false, oai.Invalid(pp+".type", "Missing required parameter: '%s.type'.", pp)
		default:
			return nil, false, oai.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. Supported values are: 'input_text', 'input_image' and 'input_file'.", pp, w.Type)
		}
	}
	return parts, false, nil
}
