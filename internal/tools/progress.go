package tools

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// mailbox is where an invocation's goroutine (the pump, reading the tool) leaves what
// happened for the run's goroutine. It holds at most one progress report: a newer one
// replaces it (superseded progress is dropped); wake, of capacity 1, says something changed.
// Safe for concurrent use.
type mailbox struct {
	wake chan struct{}

	mu        sync.Mutex
	progress  *Progress
	streaming bool
	ended     bool
	output    json.RawMessage
	err       error
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (m *mailbox) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// alive records a sign of life: the run's goroutine restarts the liveness watchdog.
func (m *mailbox) alive() { m.signal() }

func (m *mailbox) put(p *Progress) {
	m.mu.Lock()
	m.progress = p
	m.mu.Unlock()
	m.signal()
}

func (m *mailbox) setStreaming() {
	m.mu.Lock()
	m.streaming = true
	m.mu.Unlock()
	m.signal()
}

func (m *mailbox) end(output json.RawMessage, err error) {
	m.mu.Lock()
	m.ended, m.output, m.err = true, output, err
	m.mu.Unlock()
	m.signal()
}

// take returns the pending progress (nil: none), whether the answer streams, and whether the
// call ended.
func (m *mailbox) take() (p *Progress, streaming, ended bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, m.progress = m.progress, nil
	return p, m.streaming, m.ended
}

// payload is the data of a data-tool-progress part: small (the message and status are cut),
// and its fields in a fixed order.
func payload(tool string, p *Progress) []byte {
	v := struct {
		Tool string `json:"tool"`
		Progress
	}{tool, Progress{Done: p.Done, Total: p.Total, Message: clip(p.Message, maxMessage), Status: clip(p.Status, maxStatus)}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{"tool":""}`) // a number that is not finite cannot come from JSON
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// clip cuts s to at most n bytes, never inside a UTF-8 sequence, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
