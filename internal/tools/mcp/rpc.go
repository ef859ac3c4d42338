package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/sluice-gw/sluice/internal/sse"
)

// message is one JSON-RPC 2.0 message: a request (method and id), a notification (method,
// no id) or a response (id, and result or error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// Message is a JSON-RPC message as this package reads and writes it, for the gateway's
// server side (package mcpgw), which speaks the same messages to its clients.
type Message = message

// RPCError is a JSON-RPC error object, from a server's response (or, in package mcpgw, to a
// client).
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("MCP error %d: %s", e.Code, e.Message) }

func (m *message) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }
func (m *message) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 }

// answers reports whether m is the response to request id (ids are sent as numbers; a
// server may echo them as strings).
func (m *message) answers(id int64) bool {
	if !m.isResponse() {
		return false
	}
	s := string(bytes.Trim(m.ID, `"`))
	return s == strconv.FormatInt(id, 10)
}

func encode(m message) []byte {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // params are the package's own types or valid raw JSON
	}
	return b
}

func request(id int64, method string, params any) []byte {
	p, _ := json.Marshal(params)
	return encode(message{ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: p})
}

func notification(method string, params any) []byte {
	m := message{Method: method}
	if params != nil {
		m.Params, _ = json.Marshal(params)
	}
	return encode(m)
}

// Limits of what the gateway reads from a server: a JSON answer, and one SSE event.
const (
	maxJSON  = 8 << 20
	maxEvent = 8 << 20
)

// ErrSessionExpired reports a message the server did not take because it does not know the
// session: over HTTP, a 404 (MCP Streamable HTTP, "Session Management") or a 400 about the
// session to a request that carried its id; over stdio, a session of a process that has
// since exited. The message did not run; the client starts a new session.
var ErrSessionExpired = errors.New("mcp: the server no longer knows the session")

// stream reads the messages of one answer: a JSON body (one message or a batch) or an SSE
// stream of messages. Not safe for concurrent use; Close unblocks next.
type stream struct {
	sid   string // the Mcp-Session-Id of the answer
	body  io.ReadCloser
	sse   *sse.Reader // nil: a JSON body, already in queue
	queue []message
}

// newStream reads the answer resp carries; alive, if set, is called whenever bytes arrive.
func newStream(resp *http.Response, alive func()) (*stream, error) {
	var src io.Reader = resp.Body
	if alive != nil {
		src = &aliveReader{r: resp.Body, alive: alive}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	s := &stream{sid: resp.Header.Get("Mcp-Session-Id"), body: resp.Body}
	switch mt {
	case "text/event-stream":
		s.sse = sse.NewReader(src, maxEvent)
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(src, maxJSON+1))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the MCP server's answer: %w", err)
		}
		if len(b) > maxJSON {
			return nil, errors.New("the MCP server's answer is too large")
		}
		if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
			err = json.Unmarshal(b, &s.queue)
		} else {
			var m message
			err = json.Unmarshal(b, &m)
			s.queue = []message{m}
		}
		if err != nil {
			return nil, fmt.Errorf("the MCP server's answer is not JSON-RPC: %w", err)
		}
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("the MCP server answered %q, not JSON or an event stream", mt)
	}
	return s, nil
}

// next returns the next message; io.EOF when the answer ended.
func (s *stream) next() (message, error) {
	if s.sse == nil {
		if len(s.queue) == 0 {
			return message{}, io.EOF
		}
		m := s.queue[0]
		s.queue = s.queue[1:]
		return m, nil
	}
	for {
		ev, err := s.sse.Next()
		if err != nil {
			return message{}, err
		}
		if ev.Type != "" && ev.Type != "message" {
			continue // the transport sends messages as "message" events
		}
		var m message
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			return message{}, fmt.Errorf("an event of the MCP server is not JSON-RPC: %w", err)
		}
		return m, nil
	}
}

func (s *stream) Close() error    { return s.body.Close() }
func (s *stream) streams() bool   { return s.sse != nil }
func (s *stream) session() string { return s.sid }

// aliveReader calls alive whenever bytes arrive: any byte is a sign of life (liveness).
type aliveReader struct {
	r     io.Reader
	alive func()
}

func (a *aliveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.alive()
	}
	return n, err
}
