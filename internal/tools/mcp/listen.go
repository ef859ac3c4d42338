package mcp

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// listenLoop keeps the session's GET stream open (MCP Streamable HTTP, "Listening for
// Messages from the Server"), where a server sends notifications outside any request: a
// tool list change marks the list stale. It ends when the client closes, when the session is
// replaced, or when the server does not offer the stream (405) or forgot the session (404);
// a stream that breaks is opened again after a growing pause.
func (c *Client) listenLoop(s session) {
	defer c.wg.Done()
	pause := time.Second
	for {
		opened, err := c.listenOnce(s)
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
		t := time.NewTimer(pause)
		select {
		case <-c.listen.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, 30*time.Second)
	}
}

var errNoStream = errors.New("mcp: no GET stream")

// listenOnce reads one GET stream to its end; opened reports that the server accepted it.
func (c *Client) listenOnce(s session) (opened bool, err error) {
	req, err := http.NewRequestWithContext(c.listen, http.MethodGet, c.cfg.URL, nil)
	if err != nil {
		return false, errNoStream
	}
	c.headers(req, s)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return false, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		drain(resp)
		c.expire(s)
		return false, errNoStream
	case resp.StatusCode >= 500:
		drain(resp)
		return false, errors.New("mcp: the GET stream failed") // perhaps passing: try again later
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		drain(resp) // 405: the server offers no GET stream
		return false, errNoStream
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
