package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Event is what a call reports before its end: progress, or its result.
type Event struct {
	Progress *Progress // a progress notification of the call
	Result   *Result   // the call's result: the last event
}

// Progress is a notifications/progress of the call (MCP "Progress").
type Progress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total"`
	Message  string   `json:"message"`
}

// Result is a tools/call result.
type Result struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
	// Raw is the result as the server sent it, for a gateway that passes it on.
	Raw json.RawMessage `json:"-"`
}

// Text is the result's text blocks, joined by newlines; ok is false when it has other blocks.
func (r *Result) Text() (text string, ok bool) {
	var b strings.Builder
	for i, c := range r.Content {
		var block struct{ Type, Text string }
		if json.Unmarshal(c, &block) != nil || block.Type != "text" {
			return "", false
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(block.Text)
	}
	return b.String(), true
}

// Call is a tools/call in flight, pull-style. Not safe for concurrent use: canceling the
// context Call was given ends a Recv in progress (the request is canceled).
type Call struct {
	c         *Client
	s         session
	id        int64
	token     string
	st        reply
	done      bool // the response came
	err       error
	streaming bool
}

// Call starts tools/call of the tool name with args (a JSON object) and a progress token.
// alive, if set, is called whenever the answer shows a sign of life (bytes of it; a message
// of a local server). A session the server forgot is started again and the call sent again,
// once: the server refused it unrun (ErrSessionExpired). Any other failure, a timeout
// included, is returned as it is: a call that may have run is never sent twice.
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage, alive func()) (*Call, error) {
	for attempt := 0; ; attempt++ {
		s, err := c.session(ctx)
		if err != nil {
			return nil, err
		}
		id := c.ids.Add(1)
		token := "sluice-" + strconv.FormatInt(id, 10)
		params := map[string]any{"name": name, "arguments": args, "_meta": map[string]any{"progressToken": token}}
		st, err := c.tr.post(ctx, outgoing{body: request(id, "tools/call", params), id: id, token: token, alive: alive}, s)
		if errors.Is(err, ErrSessionExpired) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Call{c: c, s: s, id: id, token: token, st: st, streaming: st.streams()}, nil
	}
}

// Streaming reports whether the server answers with an event stream (which the caller
// watches for liveness) rather than a single JSON answer.
func (k *Call) Streaming() bool { return k.streaming }

// Recv returns the call's next progress, then its result, then io.EOF. A JSON-RPC error is
// an *RPCError; an answer that ends before the result is an error. Errors are sticky.
func (k *Call) Recv() (Event, error) {
	if k.err != nil {
		return Event{}, k.err
	}
	if k.done {
		k.err = io.EOF
		return Event{}, k.err
	}
	for {
		m, err := k.st.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the MCP server's answer ended before the result")
			}
			k.err = err
			return Event{}, err
		}
		switch {
		case m.answers(k.id):
			k.done = true
			if m.Error != nil {
				k.err = m.Error
				return Event{}, k.err
			}
			var r Result
			if err := json.Unmarshal(m.Result, &r); err != nil {
				k.err = fmt.Errorf("the MCP server's result is not a tool result: %w", err)
				return Event{}, k.err
			}
			r.Raw = m.Result
			return Event{Result: &r}, nil
		case m.Method == "notifications/progress":
			var p struct {
				Token json.RawMessage `json:"progressToken"`
				Progress
			}
			if json.Unmarshal(m.Params, &p) == nil && strings.Trim(string(p.Token), `"`) == k.token {
				return Event{Progress: &p.Progress}, nil
			}
		default:
			k.c.handle(m, k.s)
		}
	}
}

// Close releases the answer; a call ended before its result (stopped, timed out, gone
// silent) is cancelled at the server with notifications/cancelled (MCP "Cancellation").
func (k *Call) Close() error {
	k.st.Close()
	if !k.done {
		k.done = true
		params := map[string]any{"requestId": k.id, "reason": "canceled by the gateway"}
		k.c.send(notification("notifications/cancelled", params), k.s)
	}
	return nil
}
