package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// httpTransport is the Streamable HTTP transport (MCP 2025-06-18, "Transports"): every
// message is a POST, answered by a JSON body or an event stream; the session is the
// Mcp-Session-Id header; a GET stream carries what the server sends outside any request.
type httpTransport struct{ c *Client }

// post sends one message of session s and returns its answer (202: an empty one). A request
// that carried the session's id and is answered 404, or 400 with an error that mentions the
// session (what many servers say instead: server-everything's "Bad Request: No valid session
// ID provided", the MCP Python SDK's), is ErrSessionExpired: the server does not know the
// session, so the message did not run; the session is forgotten.
func (t *httpTransport) post(ctx context.Context, out outgoing, s session) (reply, error) {
	c := t.c
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(out.body))
	if err != nil {
		return nil, err
	}
	t.headers(req, s)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := statusError(resp)
		if forgot(resp.StatusCode, err, s) {
			c.expire(s)
			return nil, fmt.Errorf("%w (%v)", ErrSessionExpired, err)
		}
		return nil, err
	}
	if out.id == 0 { // a notification or a response: 202, nothing to read
		drain(resp)
		return emptyReply{}, nil
	}
	st, err := newStream(resp, out.alive)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// forgot reports whether an error answer to a request of session s says that the server does
// not know the session.
func forgot(status int, err error, s session) bool {
	if s.id == "" {
		return false
	}
	switch status {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		return strings.Contains(strings.ToLower(err.Error()), "session")
	}
	return false
}

func (t *httpTransport) headers(req *http.Request, s session) {
	for k, v := range t.c.cfg.Headers {
		req.Header.Set(k, v)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.proto != "" {
		req.Header.Set("Mcp-Protocol-Version", s.proto)
	}
}

// opened starts the session's GET listener when the server announced tools.listChanged.
// Called with the client's mu held.
func (t *httpTransport) opened(s session) {
	if s.listChanged {
		t.c.wg.Add(1)
		go t.listenLoop(s)
	}
}

// close ends the session with a DELETE.
func (t *httpTransport) close(s session) {
	if s.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.c.cfg.URL, nil)
	if err != nil {
		return
	}
	t.headers(req, s)
	if resp, err := t.c.cfg.Client.Do(req); err == nil {
		drain(resp)
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

// emptyReply answers a notification: nothing.
type emptyReply struct{ sid string }

func (emptyReply) next() (message, error) { return message{}, io.EOF }
func (emptyReply) Close() error           { return nil }
func (emptyReply) streams() bool          { return false }
func (r emptyReply) session() string      { return r.sid }

// listenLoop keeps the session's GET stream open (MCP Streamable HTTP, "Listening for
// Messages from the Server"), where a server sends notifications outside any request: a
// tool list change marks the list stale. It ends when the client closes, when the session is
// replaced, or when the server does not offer the stream (405) or forgot the session (404,
// or a 400 about the session); a stream that breaks is opened again after a growing pause.
func (t *httpTransport) listenLoop(s session) {
	c := t.c
	defer c.wg.Done()
	pause := time.Second
	for {
		opened, err := t.listenOnce(s)
		if errors.Is(err, errNoStream) || c.listen.Err() != nil {
			return
		}
		c.mu.Lock()
		replaced := c.cur.gen != s.gen
		c.mu.Unlock()
		if replaced {
			return
		}
		if opened {
			pause = time.Second
			c.markChanged() // notifications may have been missed while it was down
		}
		tm := time.NewTimer(pause)
		select {
		case <-c.listen.Done():
			tm.Stop()
			return
		case <-tm.C:
		}
		pause = min(2*pause, 30*time.Second)
	}
}

var errNoStream = errors.New("mcp: no GET stream")

// listenOnce reads one GET stream to its end; opened reports that the server accepted it.
func (t *httpTransport) listenOnce(s session) (opened bool, err error) {
	c := t.c
	req, err := http.NewRequestWithContext(c.listen, http.MethodGet, c.cfg.URL, nil)
	if err != nil {
		return false, errNoStream
	}
	t.headers(req, s)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return false, err
	}
	switch {
	case resp.StatusCode >= 500:
		drain(resp)
		return false, errors.New("mcp: the GET stream failed") // perhaps passing: try again later
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		if forgot(resp.StatusCode, statusError(resp), s) {
			c.expire(s)
		}
		return false, errNoStream // 405: the server offers no GET stream
	}
	st, err := newStream(resp, nil)
	if err != nil {
		return true, err
	}
	defer st.Close()
	stop := context.AfterFunc(c.listen, func() { st.Close() })
	defer stop()
	for {
		m, err := st.next()
		if err != nil {
			return true, err
		}
		c.handle(m, s)
	}
}
