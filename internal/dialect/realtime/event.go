package realtime

import (
	"cmp"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Window is relay.Window's method set (the redaction window of one text stream), as this
// wire, which does not know the relay, names it.
type Window interface {
	Write(piece string) string
	Flush() string
	Counts() map[string]int
}

// texts maps each delta event of text the client reads to the event that ends its stream
// and that event's member holding the whole text: the beta and the GA names of the response
// text and the audio transcript, and the transcription of the user's audio.
var texts = map[string]struct{ done, field string }{
	"response.text.delta":                               {"response.text.done", "text"},
	"response.output_text.delta":                        {"response.output_text.done", "text"},
	"response.audio_transcript.delta":                   {"response.audio_transcript.done", "transcript"},
	"response.output_audio_transcript.delta":            {"response.output_audio_transcript.done", "transcript"},
	"conversation.item.input_audio_transcription.delta": {"conversation.item.input_audio_transcription.completed", "transcript"},
}

// dones is texts by the ending event: its member of the whole text.
var dones = func() map[string]string {
	m := map[string]string{}
	for _, t := range texts {
		m[t.done] = t.field
	}
	return m
}()

// items are the events that carry whole conversation items, whose text a client could read
// past the windows: they are masked whole (Options.RedactJSON), unchanged when they hold no
// secret.
var items = map[string]bool{
	"response.done": true, "response.output_item.done": true, "response.content_part.done": true,
	"conversation.item.created": true, "conversation.item.added": true, "conversation.item.done": true,
	"conversation.item.retrieved": true,
}

// maxStreams bounds the text streams a session holds open; an upstream that opens more
// without ending them has them flushed.
const maxStreams = 64

// head is what every event is read for.
type head struct {
	Type string `json:"type"`
}

// filter is the server side of one session's events: the windows of its open text streams.
// Not safe for concurrent use: the goroutine that reads the upstream owns it.
type filter struct {
	o       *Options
	streams map[string]*stream
	masks   map[string]int
}

// stream is one open text stream: its window and its last delta event, whose members a
// flushed tail is sent with.
type stream struct {
	w    Window
	last map[string]json.RawMessage
}

// event is what filter.server makes of one upstream event.
type event struct {
	out     [][]byte   // what the client gets, in order (none: held)
	usage   *llm.Usage // a response.done's usage
	created bool       // a response.created: a turn began
}

// server filters one upstream event. An event that is not a JSON object is an error: it
// is dropped (the caller tells the client).
func (f *filter) server(msg []byte) (event, error) {
	var h head
	if err := json.Unmarshal(msg, &h); err != nil {
		return event{}, err
	}
	if t, ok := texts[h.Type]; ok && f.o.NewWindow != nil {
		return f.delta(msg, t.done)
	}
	if field, ok := dones[h.Type]; ok && f.o.NewWindow != nil {
		return f.done(msg, h.Type, field)
	}
	ev := event{created: h.Type == "response.created"}
	if h.Type == "response.done" {
		ev.out = f.flushAll(ev.out)
		ev.usage = responseUsage(msg)
	}
	if items[h.Type] && f.o.RedactJSON != nil {
		msg = []byte(f.o.RedactJSON(string(msg)))
	}
	ev.out = append(ev.out, msg)
	return ev, nil
}

// delta passes one delta through its stream's window: the released text goes on in the
// event, nothing when the window holds it all.
func (f *filter) delta(msg []byte, done string) (event, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return event{}, err
	}
	var piece string
	if err := json.Unmarshal(m["delta"], &piece); err != nil && m["delta"] != nil {
		return event{}, err
	}
	key := streamKey(done, m)
	s := f.streams[key]
	if s == nil {
		var ev event
		if len(f.streams) >= maxStreams {
			ev.out = f.flushAll(ev.out)
		}
		if f.streams == nil {
			f.streams = map[string]*stream{}
		}
		s = &stream{w: f.o.NewWindow()}
		f.streams[key] = s
		s.last = m
		return f.release(ev, s, s.w.Write(piece)), nil
	}
	s.last = m
	return f.release(event{}, s, s.w.Write(piece)), nil
}

// release appends to ev the stream's last delta event carrying text, if any.
func (f *filter) release(ev event, s *stream, text string) event {
	if text == "" {
		return ev
	}
	s.last["delta"] = jsonString(text)
	b, _ := json.Marshal(s.last) // raw members of a decoded object: always encodes
	ev.out = append(ev.out, b)
	return ev
}

// done ends a text stream: the window's tail goes out as a last delta, then the event with
// its whole text masked.
func (f *filter) done(msg []byte, typ, field string) (event, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return event{}, err
	}
	var ev event
	key := streamKey(typ, m)
	if s := f.streams[key]; s != nil {
		ev = f.release(ev, s, s.w.Flush())
		f.count(s)
		delete(f.streams, key)
	}
	var whole string
	if json.Unmarshal(m[field], &whole) == nil && f.o.RedactText != nil {
		if masked := f.o.RedactText(whole); masked != whole {
			m[field] = jsonString(masked)
			msg, _ = json.Marshal(m)
		}
	}
	ev.out = append(ev.out, msg)
	return ev, nil
}

// flushAll ends every open stream (a response ended, or too many are open): their tails go
// out.
func (f *filter) flushAll(out [][]byte) [][]byte {
	for key, s := range f.streams {
		out = f.release(event{out: out}, s, s.w.Flush()).out
		f.count(s)
		delete(f.streams, key)
	}
	return out
}

// count adds the masks of a stream's window to the session's.
func (f *filter) count(s *stream) {
	for k, n := range s.w.Counts() {
		if f.masks == nil {
			f.masks = map[string]int{}
		}
		f.masks[k] += n
	}
}

// streamKey names a text stream: its ending event, item and content part.
func streamKey(done string, m map[string]json.RawMessage) string {
	return done + "\x00" + string(m["item_id"]) + "\x00" + string(m["content_index"])
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// responseUsage is the usage of a response.done event (response.usage), nil when it has
// none.
func responseUsage(msg []byte) *llm.Usage {
	var d struct {
		Response struct {
			Usage *struct {
				Total   int `json:"total_tokens"`
				Input   int `json:"input_tokens"`
				Output  int `json:"output_tokens"`
				Details struct {
					Cached int `json:"cached_tokens"`
				} `json:"input_token_details"`
			} `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(msg, &d) != nil || d.Response.Usage == nil {
		return nil
	}
	u := d.Response.Usage
	total := u.Total
	if total == 0 {
		total = u.Input + u.Output
	}
	return &llm.Usage{PromptTokens: u.Input, CompletionTokens: u.Output, TotalTokens: total, CachedTokens: u.Details.Cached}
}

// errorEvent is the Realtime error event of err (OpenAI's shape: type "error" and an error
// object with type, code, message, param).
func errorEvent(err error) []byte {
	e := llm.Public(err)
	b := []byte(`{"type":"error","error":{"type":`)
	b = oai.AppendString(b, e.Type)
	b = append(b, `,"code":`...)
	b = oai.AppendString(b, cmp.Or(e.Code, "error"))
	b = append(b, `,"message":`...)
	b = oai.AppendString(b, e.Message)
	return append(b, `,"param":null,"event_id":null}}`...)
}
