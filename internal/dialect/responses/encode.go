package responses

import (
	"encoding/json"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// The Response object of the Responses API, encoded by hand like the chat chunks: one pass,
// fields in the order OpenAI writes them, deterministic, no HTML escaping.

type itemKind uint8

const (
	itemReasoning itemKind = iota + 1
	itemMessage
	itemCall
	// itemCustom is a custom tool's call (custom_tool_call: input, not arguments).
	itemCustom
	// itemRaw is an output item the gateway does not model, as the upstream sent it.
	itemRaw
)

// outItem is one output item as it is built: a reasoning item, an assistant message or a
// function call.
type outItem struct {
	kind   itemKind
	index  int // output_index
	id     string
	status string // in_progress, completed, incomplete
	// A message's content parts, in order.
	parts []*outPart
	// A reasoning item's summary text (one summary part) and opaque content.
	summary   strings.Builder
	summaryOn bool // the summary part was opened
	encrypted string
	sealed    bool // its opaque part came: the block is over
	// A function call (namespace: its tool's namespace) or a custom call (args: the input).
	callID, name, namespace, args string
	// An item as the upstream wrote it.
	raw []byte
}

type outPart struct {
	refusal bool
	text    strings.Builder
}

func (p *outPart) typ() string {
	if p.refusal {
		return "refusal"
	}
	return "output_text"
}

// respMeta is what every Response object of one request repeats.
type respMeta struct {
	id       string
	created  int64
	model    string
	echo     *respEcho
	metadata json.RawMessage
}

// respEnd is how a response ended: its status, why it is incomplete, or its error.
type respEnd struct {
	status     string // in_progress, completed, incomplete, failed
	incomplete string // incomplete_details.reason
	errCode    string
	errMsg     string
	usage      *llm.Usage // nil: null
}

// appendResponse appends the Response object.
func appendResponse(b []byte, m *respMeta, end *respEnd, items []*outItem) []byte {
	e := m.echo
	raw := func(name string, v json.RawMessage, def string) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		if v == nil {
			b = append(b, def...)
		} else {
			b = append(b, v...)
		}
	}
	b = append(b, `{"id":`...)
	b = oai.AppendString(b, m.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = oai.AppendInt(b, int(m.created))
	b = append(b, `,"status":`...)
	b = oai.AppendString(b, end.status)
	b = append(b, `,"error":`...)
	if end.errCode != "" {
		b = append(b, `{"code":`...)
		b = oai.AppendString(b, end.errCode)
		b = append(b, `,"message":`...)
		b = oai.AppendString(b, end.errMsg)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if end.incomplete != "" {
		b = append(b, `{"reason":`...)
		b = oai.AppendString(b, end.incomplete)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	raw("instructions", e.Instructions, "null")
	raw("max_output_tokens", e.MaxOutputTokens, "null")
	b = append(b, `,"model":`...)
	b = oai.AppendString(b, m.model)
	b = append(b, `,"output":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, it, e.Encrypted)
	}
	b = append(b, ']')
	raw("parallel_tool_calls", e.ParallelToolCalls, "true")
	raw("previous_response_id", e.PreviousResponseID, "null")
	raw("reasoning", e.Reasoning, `{"effort":null,"summary":null}`)
	// store: true is kept by the gateway (state.go), never by a Responses upstream.
	raw("store", e.Store, "false")
	raw("temperature", e.Temperature, "null")
	raw("text", e.Text, `{"format":{"type":"text"}}`)
	raw("tool_choice", e.ToolChoice, `"auto"`)
	raw("tools", e.Tools, "[]")
	raw("top_p", e.TopP, "null")
	raw("truncation", e.Truncation, `"disabled"`)
	b = append(b, `,"usage":`...)
	if end.usage != nil {
		b = appendRespUsage(b, end.usage)
	} else {
		b = append(b, "null"...)
	}
	raw("user", e.User, "null")
	raw("metadata", m.metadata, "{}")
	return append(b, '}')
}

func appendRespUsage(b []byte, u *llm.Usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = oai.AppendInt(b, u.PromptTokens)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = oai.AppendInt(b, u.CachedTokens)
	b = append(b, `},"output_tokens":`...)
	b = oai.AppendInt(b, u.CompletionTokens)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = oai.AppendInt(b, u.ReasoningTokens)
	b = append(b, `},"total_tokens":`...)
	b = oai.AppendInt(b, u.TotalTokens)
	return append(b, '}')
}

// appendItem appends an output item as it stands. Encrypted reasoning is included only when
// the client asked for it.
func appendItem(b []byte, it *outItem, encrypted bool) []byte {
	if it.kind == itemRaw {
		return append(b, it.raw...)
	}
	b = append(b, `{"id":`...)
	b = oai.AppendString(b, it.id)
	switch it.kind {
	case itemReasoning:
		b = append(b, `,"type":"reasoning","summary":[`...)
		if it.summaryOn {
			b = appendSummaryPart(b, it.summary.String())
		}
		b = append(b, ']')
		if encrypted && it.encrypted != "" {
			b = append(b, `,"encrypted_content":`...)
			b = oai.AppendString(b, it.encrypted)
		}
	case itemMessage:
		b = append(b, `,"type":"message","status":`...)
		b = oai.AppendString(b, it.status)
		b = append(b, `,"role":"assistant","content":[`...)
		for i, p := range it.parts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPart(b, p.refusal, p.text.String())
		}
		b = append(b, ']')
	case itemCall, itemCustom:
		b = appendCall(b, it, it.status, it.args)
	}
	return append(b, '}')
}

// appendCall appends the members of a function or custom call after its id.
func appendCall(b []byte, it *outItem, status, args string) []byte {
	if it.kind == itemCustom {
		b = append(b, `,"type":"custom_tool_call","status":`...)
		b = oai.AppendString(b, status)
		b = append(b, `,"call_id":`...)
		b = oai.AppendString(b, it.callID)
		b = append(b, `,"input":`...)
		b = oai.AppendString(b, args)
		b = append(b, `,"name":`...)
		return oai.AppendString(b, it.name)
	}
	b = append(b, `,"type":"function_call","status":`...)
	b = oai.AppendString(b, status)
	b = append(b, `,"arguments":`...)
	b = oai.AppendString(b, args)
	b = append(b, `,"call_id":`...)
	b = oai.AppendString(b, it.callID)
	b = append(b, `,"name":`...)
	b = oai.AppendString(b, it.name)
	if it.namespace != "" {
		b = append(b, `,"namespace":`...)
		b = oai.AppendString(b, it.namespace)
	}
	return b
}

// appendAdded appends an item as output_item.added announces it: nothing produced yet.
func appendAdded(b []byte, it *outItem) []byte {
	if it.kind == itemRaw {
		return append(b, it.raw...)
	}
	b = append(b, `{"id":`...)
	b = oai.AppendString(b, it.id)
	switch it.kind {
	case itemReasoning:
		b = append(b, `,"type":"reasoning","summary":[]`...)
	case itemMessage:
		b = append(b, `,"type":"message","status":"in_progress","role":"assistant","content":[]`...)
	case itemCall, itemCustom:
		b = appendCall(b, it, "in_progress", "")
	}
	return append(b, '}')
}

// appendPart appends a message content part: output_text (no annotations; logprobs are not
// carried over from other wire formats) or refusal.
func appendPart(b []byte, refusal bool, text string) []byte {
	if refusal {
		b = append(b, `{"type":"refusal","refusal":`...)
		b = oai.AppendString(b, text)
		return append(b, '}')
	}
	b = append(b, `{"type":"output_text","text":`...)
	b = oai.AppendString(b, text)
	return append(b, `,"annotations":[],"logprobs":[]}`...)
}

func appendSummaryPart(b []byte, text string) []byte {
	b = append(b, `{"type":"summary_text","text":`...)
	b = oai.AppendString(b, text)
	return append(b, '}')
}

// respStatus maps a Chat Completions finish reason to the Response status and
// incomplete_details.reason.
func respStatus(finish string) (status, reason string) {
	switch finish {
	case "length":
		return "incomplete", "max_output_tokens"
	case "content_filter":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}
