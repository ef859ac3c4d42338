package openai

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// maxItems bounds the output items one response may announce: the adapter keeps a little
// state per item, and a bogus stream must not grow it without end.
const maxItems = 4096

// itemState is what the adapter knows of one output item.
type itemState struct {
	id  string
	out int // output_index, -1 when the server sent none
	// call is the Tool.Index of a function call, -1 for other items.
	call int
	// announced: the call's id and name were sent; args: some of its arguments were;
	// summary: some of a reasoning item's summary was; text: some of a message's text or
	// refusal was.
	announced, args, summary, text bool
	// hosted: the item is one the adapter carries raw (a hosted tool's call); progress are
	// its own events, raw, in order, carried with it (llm.Event.Progress).
	hosted   bool
	progress []json.RawMessage
}

// maxProgress bounds the bytes of hosted tools' progress events one stream keeps until their
// items are done; later ones are dropped (the items still go whole).
const maxProgress = 8 << 20

type reasoningPart struct {
	item string
	part int
}

// item returns the state of the output item named by id, or by output index when the event
// has no id. An item never announced is added (a server that skips output_item.added);
// events with neither id nor index share one.
func (s *respStream) item(id string, out *int) (*itemState, error) {
	o := -1
	if out != nil {
		o = *out
	}
	for i := len(s.items) - 1; i >= 0; i-- { // most deltas are for the latest item
		it := &s.items[i]
		switch {
		case id != "" && it.id == id,
			id == "" && o >= 0 && it.out == o,
			id == "" && o < 0 && it.id == "" && it.out < 0:
			return it, nil
		}
	}
	if len(s.items) >= maxItems {
		return nil, llm.Errorf(llm.Unavailable, "%s sent more than %d output items", s.name, maxItems)
	}
	s.items = append(s.items, itemState{id: id, out: o, call: -1})
	return &s.items[len(s.items)-1], nil
}

// added starts an output item; a function call gets its index and its first fragment.
func (s *respStream) added(ev *respEvent) error {
	if ev.Item == nil {
		return nil
	}
	it, err := s.item(ev.Item.ID, ev.OutputIndex)
	if err != nil {
		return err
	}
	switch ev.Item.Type {
	case "function_call":
		s.callArgs(it, ev.Item.CallID, llm.FlatName(ev.Item.Namespace, ev.Item.Name), string(ev.Item.Arguments))
	case "custom_tool_call":
		// Its input comes whole at .done, as the arguments of a function of "input".
		s.callArgs(it, ev.Item.CallID, ev.Item.Name, "")
	default:
		it.hosted = ev.Item.raw != nil
	}
	return nil
}

// progress keeps data, an event the adapter does not read, when it is about a hosted tool's
// item announced before (response.web_search_call.searching, ...), for the item to carry.
func (s *respStream) progress(ev *respEvent, data []byte) {
	if !strings.HasPrefix(ev.Type, "response.") || ev.ItemID == "" && ev.OutputIndex == nil ||
		s.progressBytes+len(data) > maxProgress {
		return
	}
	for i := len(s.items) - 1; i >= 0; i-- {
		it := &s.items[i]
		if ev.ItemID != "" && it.id == ev.ItemID || ev.ItemID == "" && ev.OutputIndex != nil && it.out == *ev.OutputIndex {
			if it.hosted && it.call < 0 {
				var c bytes.Buffer
				if json.Compact(&c, data) == nil {
					it.progress = append(it.progress, c.Bytes())
					s.progressBytes += c.Len()
				}
			}
			return
		}
	}
}

// callArgs queues a fragment of the call it: its id and name the first time they are known,
// and args. The first fragment of a call is queued even when empty, since it gives the call
// its index.
func (s *respStream) callArgs(it *itemState, id, name, args string) {
	first := it.call < 0
	if first {
		it.call = s.calls
		s.calls++
	}
	s.called = true
	d := llm.ToolDelta{Index: it.call, Args: args}
	if !it.announced && (id != "" || name != "") {
		d.ID, d.Name, it.announced = id, name, true
	}
	if args != "" {
		it.args = true
	}
	if first || d.ID != "" || d.Name != "" || args != "" {
		s.push(llm.Event{Type: llm.EvToolCall, Tool: d})
	}
}

// itemDone ends an output item: a function call gets what was not streamed of it; a
// message its text if none was streamed; a reasoning item its summary if none was
// streamed, and its encrypted content if the client asked for it.
func (s *respStream) itemDone(ev *respEvent) error {
	item := ev.Item
	if item == nil {
		return nil
	}
	switch item.Type {
	case "function_call":
		it, err := s.item(item.ID, ev.OutputIndex)
		if err != nil {
			return err
		}
		args := ""
		if !it.args {
			args = string(item.Arguments)
		}
		// The call id of .added stands: a later, different one (seen in edited test data)
		// would make the client's tool result answer an unknown call.
		s.callArgs(it, item.CallID, llm.FlatName(item.Namespace, item.Name), args)
	case "custom_tool_call":
		it, err := s.item(item.ID, ev.OutputIndex)
		if err != nil {
			return err
		}
		s.callArgs(it, item.CallID, item.Name, llm.CustomArgs(string(item.Input)))
	case "message":
		// A server that sends a message whole, with no deltas: its parts are the deltas.
		it, err := s.item(item.ID, ev.OutputIndex)
		if err != nil || it.text {
			return err
		}
		it.text = true
		for _, c := range item.Content {
			switch {
			case c.Type == "output_text" && c.Text != "":
				s.push(llm.Event{Type: llm.EvText, Text: c.Text})
			case c.Type == "refusal" && c.Refusal != "":
				s.push(llm.Event{Type: llm.EvRefusal, Text: c.Refusal})
			}
		}
	case "reasoning":
		it, err := s.item(item.ID, ev.OutputIndex)
		if err != nil {
			return err
		}
		if !it.summary {
			for i, p := range item.Summary {
				s.reason(item.ID, i, p.Text)
			}
			it.summary = true
		}
		if s.encrypted && item.EncryptedContent != "" {
			// ID carries the item id with the opaque content: a later request hands both
			// back as one reasoning item (llm.Reasoning).
			s.push(llm.Event{Type: llm.EvReasoning, Encrypted: item.EncryptedContent, ID: item.ID})
		}
	default:
		// A hosted tool's call (web_search_call, mcp_call, ...): whole, in its place among
		// the calls, with its own progress events.
		if item.raw == nil {
			return nil
		}
		it, err := s.item(item.ID, ev.OutputIndex)
		if err != nil || it.call >= 0 {
			return err
		}
		it.call = s.calls
		s.calls++
		s.push(llm.Event{Type: llm.EvItem, Tool: llm.ToolDelta{Index: it.call}, Raw: item.raw, Progress: it.progress})
		it.progress = nil
	}
	return nil
}

// reason queues reasoning text. Field is left empty: the text came in no Chat Completions
// field, so each client-facing encoder uses its own (reasoning_content for Chat clients).
func (s *respStream) reason(item string, part int, text string) {
	if text == "" {
		return
	}
	p := reasoningPart{item, part}
	if s.reasoning && p != s.lastPart {
		text = "\n\n" + text
	}
	s.reasoning, s.lastPart = true, p
	s.push(llm.Event{Type: llm.EvReasoning, Text: text})
}
