package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the protocol version the client asks for; it speaks whatever the server answers.
const Version = "2025-06-18"

// Config says how to reach one MCP server: over Streamable HTTP (URL) or as a local process
// over stdio (Command). Exactly one of URL and Command is set.
type Config struct {
	URL     string
	Headers map[string]string // sent with every request (credentials)
	// Client makes the requests (nil: a client with no timeout: calls bound themselves).
	Client *http.Client

	// Command, with Args, Env and Dir, is a local server the client starts and keeps
	// running (stdio.go). Env is added to a minimal inherited environment (defaultEnv): the
	// gateway's own environment, with its provider keys, is not passed on.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// Backoff is the first pause before a process that exited is started again (default
	// 100ms); it doubles up to 30s, and starts over after a process that ran for a minute.
	Backoff time.Duration

	Log *slog.Logger
	// Changed, if set, is called when the server says its tool list changed, or when a
	// local server's process was started again: the caller may read it again at once. It
	// must not block.
	Changed func()
}

// Client is a session with one MCP server, started on first use and again whenever the
// server forgets it. Safe for concurrent use.
type Client struct {
	cfg Config
	tr  transport
	ids atomic.Int64 // JSON-RPC request ids

	start sync.Mutex // held while a session starts: one initialize at a time

	mu      sync.Mutex
	cur     session // the current session; cur.gen == 0: none
	gen     int
	changed bool // the tool list changed since it was last read (or was never read)
	closed  bool

	listen context.Context // of the client's goroutines (listeners, the process); canceled by Close
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// session is what requests of one session carry.
type session struct {
	// id is the transport's name of the session: the Mcp-Session-Id ("" when the server
	// keeps none), or the process a local server's session lives in.
	id, proto   string // and the negotiated version
	gen         int
	listChanged bool // the server announced tools.listChanged
}

// transport carries the messages of a client to its server: Streamable HTTP (http.go) or a
// local process's stdin and stdout (stdio.go).
type transport interface {
	// post sends one message of session s (the zero session before one started) and
	// returns what answers it: a request's response, after the progress of its token; an
	// empty reply for a notification or a response. ErrSessionExpired: the server does not
	// know s, and the message did not run.
	post(ctx context.Context, out outgoing, s session) (reply, error)
	// opened is told of every session that started.
	opened(s session)
	// close ends the transport after the client closed; s was its last session.
	close(s session)
}

// outgoing is one message to send: id and token name what answers it (0 and "": nothing);
// alive, if set, is called whenever the answer shows a sign of life.
type outgoing struct {
	body  []byte
	id    int64
	token string
	alive func()
}

// reply is the messages that answer one message, pull-style. Not safe for concurrent use;
// Close unblocks next.
type reply interface {
	next() (message, error) // io.EOF when the answer ended
	Close() error
	streams() bool   // the answer streams (an SSE body): its liveness is watched
	session() string // the session the server named in its answer (initialize)
}

// New returns a client of the server cfg names. Nothing is sent to a server over HTTP
// before the first use; a local server's process is started at once.
func New(cfg Config) *Client {
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{cfg: cfg, changed: true, listen: ctx, stop: cancel}
	if cfg.Command != "" {
		c.tr = startStdio(c)
	} else {
		c.tr = &httpTransport{c: c}
	}
	return c
}

// Changed reports whether the server's tool list may have changed since Tools last read it.
func (c *Client) Changed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *Client) markChanged() {
	c.mu.Lock()
	c.changed = true
	c.mu.Unlock()
}

// notified marks the list stale on the server's word, and says so.
func (c *Client) notified() {
	c.markChanged()
	if c.cfg.Changed != nil {
		c.cfg.Changed()
	}
}

// session returns the current session, starting one when there is none.
func (c *Client) session(ctx context.Context) (session, error) {
	c.mu.Lock()
	cur, closed := c.cur, c.closed
	c.mu.Unlock()
	if closed {
		return session{}, errClosed
	}
	if cur.gen != 0 {
		return cur, nil
	}
	c.start.Lock()
	defer c.start.Unlock()
	c.mu.Lock()
	cur = c.cur
	c.mu.Unlock()
	if cur.gen != 0 {
		return cur, nil // another caller started it meanwhile
	}
	return c.initialize(ctx)
}

var errClosed = errors.New("mcp: client closed")

// expire forgets s after the server said it does not know it; a newer session is kept.
func (c *Client) expire(s session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur.gen == s.gen {
		c.cur = session{}
	}
}

// initialize starts a session: initialize, then notifications/initialized (MCP lifecycle).
// Called with c.start held.
func (c *Client) initialize(ctx context.Context) (session, error) {
	id := c.ids.Add(1)
	params := map[string]any{"protocolVersion": Version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "sluice", "version": "1"}}
	r, err := c.tr.post(ctx, outgoing{body: request(id, "initialize", params), id: id}, session{})
	if err != nil {
		return session{}, fmt.Errorf("mcp initialize: %w", err)
	}
	sid := r.session()
	raw, err := c.result(r, id, session{id: sid})
	if err != nil {
		return session{}, fmt.Errorf("mcp initialize: %w", err)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Tools *struct {
				ListChanged bool `json:"listChanged"`
			} `json:"tools"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.ProtocolVersion == "" {
		return session{}, errors.New("mcp initialize: the server's answer has no protocolVersion")
	}
	s := session{id: sid, proto: res.ProtocolVersion}
	s.listChanged = res.Capabilities.Tools != nil && res.Capabilities.Tools.ListChanged
	ack, err := c.tr.post(ctx, outgoing{body: notification("notifications/initialized", nil)}, s)
	if err != nil {
		return session{}, fmt.Errorf("mcp initialized: %w", err)
	}
	ack.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return session{}, errClosed
	}
	c.gen++
	s.gen = c.gen
	c.cur, c.changed = s, true // a new session may serve another list
	c.tr.opened(s)
	return s, nil
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// result reads r until the response to request id and returns its result, handling what
// comes before it (notifications, the server's own requests) as any stream's messages.
func (c *Client) result(r reply, id int64, s session) (json.RawMessage, error) {
	defer r.Close()
	for {
		m, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the answer ended without a response")
			}
			return nil, err
		}
		if m.answers(id) {
			if m.Error != nil {
				return nil, m.Error
			}
			return m.Result, nil
		}
		c.handle(m, s)
	}
}

// handle acts on a message that is not the awaited response: a tool list change marks the
// list stale; a request of the server's is answered (ping; anything else is refused: the
// gateway offers no sampling, roots or elicitation).
func (c *Client) handle(m message, s session) {
	switch {
	case m.Method == "notifications/tools/list_changed":
		c.notified()
	case m.isRequest():
		reply := message{ID: m.ID, Result: json.RawMessage(`{}`)}
		if m.Method != "ping" {
			reply = message{ID: m.ID, Error: &RPCError{Code: -32601, Message: "method not found: " + m.Method}}
		}
		c.send(encode(reply), s)
	}
}

// send posts a message whose answer does not matter (a reply, a notification), on its own
// short deadline: the context that asked may be gone (a cancellation).
func (c *Client) send(body []byte, s session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := c.tr.post(ctx, outgoing{body: body}, s); err == nil {
		r.Close()
	} else {
		c.cfg.Log.Debug("mcp: a message to the server failed", "server", c.name(), "err", err.Error())
	}
}

// name is how logs name the server: its URL, or its command.
func (c *Client) name() string {
	if c.cfg.Command != "" {
		return c.cfg.Command
	}
	return c.cfg.URL
}

// Close ends the session (over HTTP, a DELETE, as the transport asks of a client that
// leaves; a local server's process is stopped) and the client's goroutines, and waits for
// them.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	s := c.cur
	c.cur = session{}
	c.mu.Unlock()
	c.stop()
	c.tr.close(s)
	c.wg.Wait()
	return nil
}
