package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the protocol version the client asks for; it speaks whatever the server answers.
const Version = "2025-06-18"

// Config says how to reach one MCP server.
type Config struct {
	URL     string
	Headers map[string]string // sent with every request (credentials)
	// Client makes the requests (nil: a client with no timeout: calls bound themselves).
	Client *http.Client
	Log    *slog.Logger
	// Changed, if set, is called when the server says its tool list changed: the caller may
	// read it again at once. It must not block.
	Changed func()
}

// Client is a session with one MCP server, started on first use and again whenever the
// server forgets it. Safe for concurrent use.
type Client struct {
	cfg Config
	ids atomic.Int64 // JSON-RPC request ids

	start sync.Mutex // held while a session starts: one initialize at a time

	mu      sync.Mutex
	cur     session // the current session; cur.gen == 0: none
	gen     int
	changed bool // the tool list changed since it was last read (or was never read)
	closed  bool

	listen context.Context // of the GET listeners; canceled by Close
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// session is what requests of one session carry.
type session struct {
	id, proto   string // Mcp-Session-Id ("" when the server keeps none), the negotiated version
	gen         int
	listChanged bool // the server announced tools.listChanged
}

// New returns a client of the server cfg names; nothing is sent before the first use.
func New(cfg Config) *Client {
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{cfg: cfg, changed: true, listen: ctx, stop: cancel}
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
		return session{}, errors.New("mcp: client closed")
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

// expire forgets s after the server answered 404 to it; a newer session is kept.
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
	resp, err := c.post(ctx, request(id, "initialize", params), session{})
	if err != nil {
		return session{}, fmt.Errorf("mcp initialize: %w", err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	raw, err := c.result(resp, id, session{}, nil)
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
	ack, err := c.post(ctx, notification("notifications/initialized", nil), s)
	if err != nil {
		return session{}, fmt.Errorf("mcp initialized: %w", err)
	}
	drain(ack)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return session{}, errors.New("mcp: client closed")
	}
	c.gen++
	s.gen = c.gen
	c.cur, c.changed = s, true // a new session may serve another list
	if s.listChanged {
		c.wg.Add(1)
		go c.listenLoop(s)
	}
	return s, nil
}

// post sends one message of session s and returns the answer (202: an empty one). A 404 to
// a request that carried the session's id is ErrSessionExpired, and the session is forgotten.
func (c *Client) post(ctx context.Context, body []byte, s session) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	c.headers(req, s)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound && s.id != "" {
		drain(resp)
		c.expire(s)
		return nil, ErrSessionExpired
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(resp)
	}
	return resp, nil
}

func (c *Client) headers(req *http.Request, s session) {
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.proto != "" {
		req.Header.Set("Mcp-Protocol-Version", s.proto)
	}
}

// statusError is a short, single-line account of an error answer (it may reach a client,
// after redaction): the status and the start of the body.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	msg := strings.Join(strings.Fields(string(b)), " ")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		return fmt.Errorf("the MCP server answered HTTP %d", resp.StatusCode)
	}
	return fmt.Errorf("the MCP server answered HTTP %d: %s", resp.StatusCode, msg)
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// result reads resp until the response to request id and returns its result, handling what
// comes before it (notifications, the server's own requests) as any stream's messages.
func (c *Client) result(resp *http.Response, id int64, s session, alive func()) (json.RawMessage, error) {
	st, err := newStream(resp, alive)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for {
		m, err := st.next()
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
	if resp, err := c.post(ctx, body, s); err == nil {
		drain(resp)
	} else {
		c.cfg.Log.Debug("mcp: a message to the server failed", "url", c.cfg.URL, "err", err.Error())
	}
}

// Close ends the session (an HTTP DELETE, as the transport asks of a client that leaves)
// and its listener, and waits for them.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	s := c.cur
	c.cur = session{}
	c.mu.Unlock()
	c.stop()
	c.wg.Wait()
	if s.id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.cfg.URL, nil)
	if err != nil {
		return err
	}
	c.headers(req, s)
	if resp, err := c.cfg.Client.Do(req); err == nil {
		drain(resp)
	}
	return nil
}
