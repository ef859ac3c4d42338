package responses

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/jsonscan"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// stream turns released events into the output items of a Response and, when ew is
// set, into the Responses stream events (DESIGN §5): `event: <type>` + `data:` frames with a
// sequence_number counting from 0. With no ew it only assembles the items, for a
// non-streamed client. It is the relay.Sink of one request; not safe for concurrent use.
//
// Items open and close as the kind of content changes: reasoning deltas feed a reasoning
// item, text and refusal deltas the content parts of a message item, and each tool call,
// released whole at the end of the round, is a function_call item with one arguments delta.
type stream struct {
	ew     *sse.Writer
	meta   *respMeta
	base   string // the request id, for item ids
	seq    int
	items  []*outItem
	cur    *outItem // the open item, if any
	finish string
	buf    []byte
	// done is how the response ended once it completed (end, body); nil before.
	done *respEnd
}

func newStream(ew *sse.Writer, meta *respMeta, base string) *stream {
	return &stream{ew: ew, meta: meta, base: base}
}

func (s *stream) Event(ev *llm.Event) error {
	if ev.Choice != 0 {
		return nil // the Responses API has no n: one choice
	}
	switch ev.Type {
	case llm.EvText, llm.EvRefusal:
		if ev.Text == "" {
			return nil
		}
		return s.text(ev.Type == llm.EvRefusal, ev.Text)
	case llm.EvReasoning:
		return s.reasoning(ev)
	case llm.EvToolCall:
		return s.call(ev.Tool)
	case llm.EvItem:
		return s.item(ev.Raw, ev.Progress)
	case llm.EvDone:
		s.finish = ev.Finish
		st, _ := respStatus(ev.Finish)
		return s.close(st)
	}
	// EvStart, EvUsage and EvLogprobs: usage goes in the final Response; logprobs have no
	// equivalent here.
	return nil
}

// open starts a new output item and announces it.
func (s *stream) open(kind itemKind, prefix string) (*outItem, error) {
	n := len(s.items)
	it := &outItem{kind: kind, index: n, id: prefix + s.base + "_" + strconv.Itoa(n), status: "in_progress"}
	s.items = append(s.items, it)
	s.cur = it
	if s.ew == nil {
		return it, nil
	}
	b := s.index(s.head("response.output_item.added"), it)
	b = append(b, `,"item":`...)
	b = appendAdded(b, it)
	return it, s.send(b)
}

func (s *stream) text(refusal bool, text string) error {
	if s.cur != nil && s.cur.kind != itemMessage {
		if err := s.close("completed"); err != nil {
			return err
		}
	}
	if s.cur == nil {
		if _, err := s.open(itemMessage, "msg_"); err != nil {
			return err
		}
	}
	it := s.cur
	var p *outPart
	if n := len(it.parts); n > 0 && it.parts[n-1].refusal == refusal {
		p = it.parts[n-1]
	} else {
		if n > 0 {
			if err := s.partDone(it, n-1); err != nil {
				return err
			}
		}
		p = &outPart{refusal: refusal}
		it.parts = append(it.parts, p)
		if s.ew != nil {
			b := s.ref(s.head("response.content_part.added"), it)
			b = append(b, `,"content_index":`...)
			b = oai.AppendInt(b, len(it.parts)-1)
			b = append(b, `,"part":`...)
			b = appendPart(b, refusal, "")
			if err := s.send(b); err != nil {
				return err
			}
		}
	}
	p.text.WriteString(text)
	if s.ew == nil {
		return nil
	}
	b := s.ref(s.head("response."+p.typ()+".delta"), it)
	b = append(b, `,"content_index":`...)
	b = oai.AppendInt(b, len(it.parts)-1)
	b = append(b, `,"delta":`...)
	b = oai.AppendString(b, text)
	if !refusal {
		b = append(b, `,"logprobs":[]`...)
	}
	return s.send(b)
}

// partDone ends content part i of a message: its text is final.
func (s *stream) partDone(it *outItem, i int) error {
	if s.ew == nil {
		return nil
	}
	p := it.parts[i]
	b := s.ref(s.head("response."+p.typ()+".done"), it)
	b = append(b, `,"content_index":`...)
	b = oai.AppendInt(b, i)
	if p.refusal {
		b = append(b, `,"refusal":`...)
		b = oai.AppendString(b, p.text.String())
	} else {
		b = append(b, `,"text":`...)
		b = oai.AppendString(b, p.text.String())
		b = append(b, `,"logprobs":[]`...)
	}
	if err := s.send(b); err != nil {
		return err
	}
	b = s.ref(s.head("response.content_part.done"), it)
	b = append(b, `,"content_index":`...)
	b = oai.AppendInt(b, i)
	b = append(b, `,"part":`...)
	b = appendPart(b, p.refusal, p.text.String())
	return s.send(b)
}

// reasoning feeds the open reasoning item, or opens one. Opaque content (Encrypted: a
// Responses item's encrypted_content, an Anthropic signature) ends its block (relay and
// adapters guarantee it comes after the block's text), so it seals the item: reasoning after
// it is another item, and each keeps its own opaque part to hand back.
func (s *stream) reasoning(ev *llm.Event) error {
	if ev.Text == "" && ev.Encrypted == "" {
		return nil
	}
	if s.cur != nil && (s.cur.kind != itemReasoning || s.cur.sealed) {
		if err := s.close("completed"); err != nil {
			return err
		}
	}
	it := s.cur
	if it == nil {
		var err error
		if it, err = s.open(itemReasoning, "rs_"); err != nil {
			return err
		}
	}
	if ev.Text != "" {
		if err := s.summary(it, ev.Text); err != nil {
			return err
		}
	}
	if ev.Encrypted != "" {
		it.encrypted, it.sealed = ev.Encrypted, true
	}
	return nil
}

// summary appends reasoning text to the item's one summary part, opening it first.
func (s *stream) summary(it *outItem, text string) error {
	if !it.summaryOn {
		it.summaryOn = true
		if s.ew != nil {
			b := s.ref(s.head("response.reasoning_summary_part.added"), it)
			b = append(b, `,"summary_index":0,"part":`...)
			b = appendSummaryPart(b, "")
			if err := s.send(b); err != nil {
				return err
			}
		}
	}
	it.summary.WriteString(text)
	if s.ew == nil {
		return nil
	}
	b := s.ref(s.head("response.reasoning_summary_text.delta"), it)
	b = append(b, `,"summary_index":0,"delta":`...)
	b = oai.AppendString(b, text)
	return s.send(b)
}

// call emits a whole tool call as a function_call item (added, one arguments delta, done),
// or, for a custom tool, as a custom_tool_call item (added, one input delta, done). A call of
// a namespace's function goes back under its own name, in its namespace.
func (s *stream) call(tc llm.ToolDelta) error {
	if err := s.close("completed"); err != nil {
		return err
	}
	n := len(s.items)
	callID := tc.ID
	if callID == "" {
		callID = "call_" + s.base + "_" + strconv.Itoa(n) // some upstreams send none
	}
	it := &outItem{kind: itemCall, index: n, id: "fc_" + s.base + "_" + strconv.Itoa(n), status: "in_progress",
		callID: callID, name: tc.Name, args: tc.Args}
	delta, done, member := "response.function_call_arguments.delta", "response.function_call_arguments.done", "arguments"
	if ref, ok := s.meta.echo.refs[tc.Name]; ok {
		it.name, it.namespace = ref.name, ref.namespace
		if ref.custom {
			it.kind, it.id, it.args = itemCustom, "ctc_"+s.base+"_"+strconv.Itoa(n), llm.CustomInput(tc.Args)
			delta, done, member = "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "input"
		}
	}
	s.items = append(s.items, it)
	if s.ew != nil {
		b := s.index(s.head("response.output_item.added"), it)
		b = append(b, `,"item":`...)
		b = appendAdded(b, it)
		if err := s.send(b); err != nil {
			return err
		}
		b = s.ref(s.head(delta), it)
		b = append(b, `,"delta":`...)
		b = oai.AppendString(b, it.args)
		if err := s.send(b); err != nil {
			return err
		}
		b = s.ref(s.head(done), it)
		if it.kind == itemCall {
			b = append(b, `,"name":`...)
			b = oai.AppendString(b, it.name)
		}
		b = append(b, ',', '"')
		b = append(b, member...)
		b = append(b, '"', ':')
		b = oai.AppendString(b, it.args)
		if err := s.send(b); err != nil {
			return err
		}
	}
	s.cur = it
	return s.close("completed")
}

// item emits an output item the gateway does not model as the upstream wrote it: added, its
// own progress events (a hosted tool's .in_progress, .searching, .completed, ...), and done
// with the item whole.
func (s *stream) item(raw []byte, progress []json.RawMessage) error {
	if err := s.close("completed"); err != nil {
		return err
	}
	it := &outItem{kind: itemRaw, index: len(s.items), raw: append([]byte(nil), raw...)}
	var id struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &id) == nil {
		it.id = id.ID
	}
	s.items = append(s.items, it)
	if s.ew != nil {
		b := s.index(s.head("response.output_item.added"), it)
		b = append(b, `,"item":`...)
		b = appendAdded(b, it)
		if err := s.send(b); err != nil {
			return err
		}
		for _, p := range progress {
			if err := s.progress(it, p); err != nil {
				return err
			}
		}
	}
	s.cur = it
	return s.close("completed")
}

// progress sends ev, a progress event of the raw item it as its upstream wrote it, renumbered:
// this stream's sequence_number and the item's output_index replace the upstream's, every
// other member (item_id, a code delta, ...) stays as it came. An event that is not a plain
// object with a type is dropped.
func (s *stream) progress(it *outItem, ev []byte) error {
	var typ string
	p := jsonscan.New(ev)
	if p.Peek() != '{' {
		return nil
	}
	p.Advance()
	var rest []byte
	for first := true; ; first = false {
		key, end, ok := p.Member(first)
		if !ok {
			return nil
		}
		if end {
			break
		}
		v, ok := p.Value()
		if !ok {
			return nil
		}
		switch string(key) {
		case "type":
			if json.Unmarshal(v, &typ) != nil {
				return nil
			}
		case "sequence_number", "output_index":
		default:
			rest = append(rest, ',', '"')
			rest = append(append(rest, key...), '"', ':')
			rest = append(rest, v...)
		}
	}
	if typ == "" || strings.ContainsAny(typ, "\r\n\"\\") {
		return nil // it would break the frame's event line
	}
	b := s.index(s.head(typ), it)
	return s.send(append(b, rest...))
}

// close ends the open item, if any, with status.
func (s *stream) close(status string) error {
	it := s.cur
	if it == nil {
		return nil
	}
	s.cur = nil
	it.status = status
	if s.ew == nil {
		return nil
	}
	switch {
	case it.kind == itemMessage && len(it.parts) > 0:
		if err := s.partDone(it, len(it.parts)-1); err != nil {
			return err
		}
	case it.kind == itemReasoning && it.summaryOn:
		text := it.summary.String()
		b := s.ref(s.head("response.reasoning_summary_text.done"), it)
		b = append(b, `,"summary_index":0,"text":`...)
		b = oai.AppendString(b, text)
		if err := s.send(b); err != nil {
			return err
		}
		b = s.ref(s.head("response.reasoning_summary_part.done"), it)
		b = append(b, `,"summary_index":0,"part":`...)
		b = appendSummaryPart(b, text)
		if err := s.send(b); err != nil {
			return err
		}
	}
	b := s.index(s.head("response.output_item.done"), it)
	b = append(b, `,"item":`...)
	b = appendItem(b, it, s.meta.echo.Encrypted)
	return s.send(b)
}
