package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sluice-gw/sluice/internal/sse"
)

// wireEvent is one event of a streamed answer (SSE data, or one NDJSON line):
//
//	{"kind":"progress","done":3,"total":10,"message":"..."}
//	{"kind":"result","output":...}
//	{"kind":"error","message":"..."}
//
// An SSE event's type stands in for a missing kind. Other kinds (a heartbeat, a log line) are
// skipped; like any byte, they keep the call alive.
type wireEvent struct {
	Kind    string          `json:"kind"`
	Done    *float64        `json:"done"`
	Total   *float64        `json:"total"`
	Message string          `json:"message"`
	Status  string          `json:"status"`
	Output  json.RawMessage `json:"output"`
	Error   string          `json:"error"`
}

// frames yields the raw events of a streamed answer: SSE events or NDJSON lines.
type frames interface {
	next() (data []byte, typ string, err error)
}

type sseFrames struct{ r *sse.Reader }

func (f sseFrames) next() ([]byte, string, error) {
	ev, err := f.r.Next()
	return ev.Data, ev.Type, err
}

type ndjsonFrames struct{ r *bufio.Reader }

func (f ndjsonFrames) next() ([]byte, string, error) {
	for {
		line, err := f.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, "", errors.New("an event of the tool is too large")
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, "", nil // a last line without its newline is an event too
		}
		if err != nil {
			return nil, "", err
		}
	}
}

// streamCall reads a streamed answer.
type streamCall struct {
	body io.Closer
	f    frames
	err  error
}

func (c *streamCall) Streaming() bool { return true }
func (c *streamCall) Close() error    { return c.body.Close() }

func (c *streamCall) Recv() (event, error) {
	if c.err != nil {
		return event{}, c.err
	}
	for {
		data, typ, err := c.f.next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, sse.ErrCut) {
				err = errors.New("the tool's answer ended before its result")
			}
			c.err = err
			return event{}, err
		}
		var w wireEvent
		if err := json.Unmarshal(data, &w); err != nil {
			c.err = fmt.Errorf("an event of the tool is not JSON: %w", err)
			return event{}, c.err
		}
		if w.Kind == "" {
			w.Kind = typ
		}
		switch w.Kind {
		case "progress":
			return event{progress: &Progress{Done: w.Done, Total: w.Total, Message: w.Message, Status: w.Status}}, nil
		case "result":
			c.err = io.EOF // nothing after the result is read
			if len(w.Output) == 0 {
				w.Output = json.RawMessage("null")
			}
			return event{output: w.Output}, nil
		case "error":
			msg := w.Message
			if msg == "" {
				msg = w.Error
			}
			if msg == "" {
				msg = "the tool failed"
			}
			c.err = failed(msg)
			return event{}, c.err
		}
	}
}
