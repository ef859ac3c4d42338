package uistream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// uiPart is what the gateway reads of a UIMessage part (ai@5 to ai@7 share these fields).
type uiPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	MediaType  string          `json:"mediaType"`
	URL        string          `json:"url"`
	Filename   string          `json:"filename"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"` // dynamic-tool parts only
	State      string          `json:"state"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Meta       struct {
		Sluice struct {
			Restarted bool `json:"restarted"`
		} `json:"sluice"`
	} `json:"providerMetadata"`
}

type uiMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []uiPart `json:"parts"`
}

// History is the llm form of a request's UIMessage history.
type History struct {
	Messages []llm.Message
	// LastAssistant is the id of the last message when it is the assistant's: the run
	// continues that message (after the client ran its tools), as the AI SDK's own server does.
	LastAssistant string
}

// Messages converts UIMessages (ai@5..7) to llm messages. Text and files (images, and text
// files sent as data URLs) become content; an assistant message is cut at its step-start
// parts, each step one assistant message with its tool calls followed by their results, so a
// tool part with an output becomes a call and a result. Tool parts without an output yet,
// reasoning, sources, data parts and parts abandoned by a restart are left out. Errors are
// 400s naming the part.
func Messages(raw json.RawMessage) (*History, error) {
	var ms []uiMessage
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, oai.Invalid("messages", "Invalid 'messages': expected an array of UIMessage objects (id, role, parts): %v", err)
	}
	h := &History{}
	for i, m := range ms {
		p := fmt.Sprintf("messages[%d]", i)
		var err error
		switch m.Role {
		case "system", "user":
			err = h.content(p, m)
		case "assistant":
			err = h.assistant(p, m)
		default:
			return nil, oai.Invalid(p+".role", "Invalid value for '%s.role': '%s'. Supported values are: 'system', 'user' and 'assistant'.", p, m.Role)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(ms) > 0 && ms[len(ms)-1].Role == "assistant" {
		h.LastAssistant = ms[len(ms)-1].ID
	}
	if len(h.Messages) == 0 {
		return nil, oai.Invalid("messages", "Invalid 'messages': no message with content. Expected at least one message with a text or file part.")
	}
	return h, nil
}

func (h *History) content(p string, m uiMessage) error {
	msg := llm.Message{Role: llm.Role(m.Role)}
	for j, part := range m.Parts {
		pp := fmt.Sprintf("%s.parts[%d]", p, j)
		switch part.Type {
		case "text":
			msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartText, Text: part.Text})
		case "file":
			if m.Role == "system" {
				return oai.Invalid(pp, "Invalid '%s': a system message holds text only.", pp)
			}
			fp, err := file(pp, part)
			if err != nil {
				return err
			}
			msg.Parts = append(msg.Parts, fp)
		}
	}
	if len(msg.Parts) > 0 {
		h.Messages = append(h.Messages, msg)
	}
	return nil
}

// file turns a file part into content: images by URL (https or data:), text files inlined.
func file(p string, part uiPart) (llm.Part, error) {
	mt := strings.ToLower(part.MediaType)
	switch {
	case strings.HasPrefix(mt, "image/"):
		return llm.Part{Type: llm.PartImage, URL: part.URL}, nil
	case strings.HasPrefix(mt, "text/") && strings.HasPrefix(part.URL, "data:"):
		text, err := dataText(part.URL)
		if err != nil {
			return llm.Part{}, oai.Invalid(p+".url", "Invalid '%s.url': %v", p, err)
		}
		if part.Filename != "" {
			text = part.Filename + ":\n" + text
		}
		return llm.Part{Type: llm.PartText, Text: text}, nil
	}
	return llm.Part{}, oai.Invalid(p+".mediaType", "Invalid '%s': files of type '%s' are not supported; send images, or text files as data URLs.", p, part.MediaType)
}

// dataText decodes the text of a data: URL.
func dataText(u string) (string, error) {
	head, body, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !ok {
		return "", fmt.Errorf("not a data URL")
	}
	if strings.HasSuffix(head, ";base64") {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return "", fmt.Errorf("bad base64 in the data URL")
		}
		return string(b), nil
	}
	s, err := url.PathUnescape(body)
	if err != nil {
		return "", fmt.Errorf("bad escape in the data URL")
	}
	return s, nil
}

// assistant converts an assistant message step by step.
func (h *History) assistant(p string, m uiMessage) error {
	var (
		msg     llm.Message
		results []llm.Message
	)
	flush := func() {
		if len(msg.Parts) > 0 || len(msg.ToolCalls) > 0 {
			msg.Role = llm.RoleAssistant
			h.Messages = append(h.Messages, msg)
			h.Messages = append(h.Messages, results...)
		}
		msg, results = llm.Message{}, nil
	}
	for j, part := range m.Parts {
		if part.Meta.Sluice.Restarted {
			continue // abandoned by a restart: the client was told to drop it
		}
		switch {
		case part.Type == "step-start":
			flush()
		case part.Type == "text":
			if part.Text != "" {
				msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartText, Text: part.Text})
			}
		case part.Type == "dynamic-tool" || strings.HasPrefix(part.Type, "tool-"):
			name := part.ToolName
			if part.Type != "dynamic-tool" {
				name = strings.TrimPrefix(part.Type, "tool-")
			}
			out, ok := toolResult(part)
			if !ok {
				continue // no output yet: a call without its result would be refused upstream
			}
			if part.ToolCallID == "" {
				return oai.Invalid(fmt.Sprintf("%s.parts[%d].toolCallId", p, j), "Missing required parameter: '%s.parts[%d].toolCallId'.", p, j)
			}
			args := string(part.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: part.ToolCallID, Name: name, Arguments: args})
			results = append(results, llm.Message{Role: llm.RoleTool, ToolCallID: part.ToolCallID,
				Parts: []llm.Part{{Type: llm.PartText, Text: out}}})
		}
	}
	flush()
	return nil
}

// toolResult is the text a tool part's outcome gives the model; false when it has none yet.
func toolResult(part uiPart) (string, bool) {
	switch part.State {
	case "output-available":
		var s string
		if json.Unmarshal(part.Output, &s) == nil {
			return s, true
		}
		if len(part.Output) == 0 {
			return "null", true
		}
		return string(part.Output), true
	case "output-error":
		return "Error: " + part.ErrorText, true
	case "output-denied":
		return "The user denied this tool call.", true
	}
	return "", false
}
