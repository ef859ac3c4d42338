package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The simulated providers serve Realtime sessions in-process (issue 48): an echo.
var (
	_ llm.Realtimer = chat{}
	_ llm.Realtimer = responses{}
	_ llm.Realtimer = messages{}
)

func (chat) Realtime(ctx context.Context, call llm.RealtimeCall) (llm.RealtimeConn, error) {
	return newEcho(call), nil
}

func (responses) Realtime(ctx context.Context, call llm.RealtimeCall) (llm.RealtimeConn, error) {
	return newEcho(call), nil
}

func (messages) Realtime(ctx context.Context, call llm.RealtimeCall) (llm.RealtimeConn, error) {
	return newEcho(call), nil
}

// echoChunk is the size of the echo's text deltas, in bytes: small, so that a word (or a
// secret) spans several.
const echoChunk = 5

// maxQueued bounds the events an echo holds for a client that does not read them.
const maxQueued = 4096

// echo is a simulated Realtime session: session.created at once, then for each
// response.create a response whose text deltas echo the last user text, its .done, and a
// response.done with usage; session.update is answered session.updated, an event that is
// not JSON an error event. Safe for one reader and concurrent writers.
type echo struct {
	model string
	beta  bool // the beta event names (response.text.delta), else the GA ones

	mu     sync.Mutex
	queue  [][]byte
	last   string // the last user text
	n      int    // responses so far
	ready  chan struct{}
	closed chan struct{}
	once   sync.Once
}

func newEcho(call llm.RealtimeCall) *echo {
	e := &echo{model: call.Model, beta: call.Beta != "", ready: make(chan struct{}, 1), closed: make(chan struct{})}
	e.push(`{"type":"session.created","event_id":"evt_sim_0","session":{"id":"sess_sim","object":"realtime.session","model":` +
		quote(call.Model) + `,"modalities":["text"]}}`)
	return e
}

// Read returns the next event; io.EOF once closed.
func (e *echo) Read(ctx context.Context) ([]byte, error) {
	for {
		e.mu.Lock()
		if len(e.queue) > 0 {
			b := e.queue[0]
			e.queue[0] = nil
			e.queue = e.queue[1:]
			e.mu.Unlock()
			return b, nil
		}
		e.mu.Unlock()
		select {
		case <-e.ready:
		case <-e.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, llm.ContextError(ctx)
		}
	}
}

// Write takes one client event.
func (e *echo) Write(_ context.Context, event []byte) error {
	select {
	case <-e.closed:
		return errors.New("sim: session closed")
	default:
	}
	var ev struct {
		Type    string          `json:"type"`
		Session json.RawMessage `json:"session"`
		Item    struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	}
	if err := json.Unmarshal(event, &ev); err != nil {
		e.push(`{"type":"error","error":{"type":"invalid_request_error","code":"invalid_json","message":"The event is not valid JSON.","param":null,"event_id":null}}`)
		return nil
	}
	switch ev.Type {
	case "session.update":
		s := string(ev.Session)
		if s == "" {
			s = "{}"
		}
		e.push(`{"type":"session.updated","session":` + s + `}`)
	case "conversation.item.create":
		if ev.Item.Role == "user" {
			text := ""
			for _, c := range ev.Item.Content {
				text += c.Text
			}
			e.mu.Lock()
			e.last = text
			e.mu.Unlock()
		}
	case "response.create":
		e.respond()
	}
	return nil
}

// respond queues one response echoing the last user text.
func (e *echo) respond() {
	e.mu.Lock()
	e.n++
	text, id := e.last, "resp_sim_"+strconv.Itoa(e.n)
	e.mu.Unlock()
	item := "item_sim_" + strconv.Itoa(e.n)
	delta, done := "response.output_text.delta", "response.output_text.done"
	if e.beta {
		delta, done = "response.text.delta", "response.text.done"
	}
	e.push(`{"type":"response.created","response":{"id":"` + id + `","object":"realtime.response","status":"in_progress"}}`)
	ids := `"response_id":"` + id + `","item_id":"` + item + `","output_index":0,"content_index":0`
	for rest := text; rest != ""; {
		n := min(echoChunk, len(rest))
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++
		}
		e.push(`{"type":"` + delta + `",` + ids + `,"delta":` + quote(rest[:n]) + `}`)
		rest = rest[n:]
	}
	e.push(`{"type":"` + done + `",` + ids + `,"text":` + quote(text) + `}`)
	in, out := 10+(len(text)+3)/4, (len(text)+3)/4
	e.push(`{"type":"response.done","response":{"id":"` + id + `","object":"realtime.response","status":"completed","output":[{"id":"` + item +
		`","type":"message","role":"assistant","content":[{"type":"text","text":` + quote(text) + `}]}],"usage":{"total_tokens":` +
		strconv.Itoa(in+out) + `,"input_tokens":` + strconv.Itoa(in) + `,"output_tokens":` + strconv.Itoa(out) + `}}}`)
}

// push queues one event and wakes the reader; past maxQueued the session is closed.
func (e *echo) push(s string) {
	e.mu.Lock()
	full := len(e.queue) >= maxQueued
	if !full {
		e.queue = append(e.queue, []byte(s))
	}
	e.mu.Unlock()
	if full {
		_ = e.Close()
		return
	}
	select {
	case e.ready <- struct{}{}:
	default:
	}
}

// Close ends the session: Read returns io.EOF.
func (e *echo) Close() error {
	e.once.Do(func() { close(e.closed) })
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
