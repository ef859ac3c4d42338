// Package providertest holds what the provider adapters' tests share: an upstream that
// records the request it got, an event-stream handler that flushes event by event, and a
// drain of an llm.Stream. Tests only.
package providertest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Upstream is an httptest server whose handler is set per test; it records the last
// request. Closed at the test's cleanup.
type Upstream struct {
	*httptest.Server
	mu     sync.Mutex
	body   []byte
	header http.Header
	url    string
}

// NewUpstream serves h after recording each request.
func NewUpstream(t *testing.T, h http.HandlerFunc) *Upstream {
	t.Helper()
	u := &Upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.body, u.header, u.url = b, r.Header.Clone(), r.URL.String()
		u.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// Last returns the last request's body, headers and URL (path and query); a nil body when
// no request came.
func (u *Upstream) Last() (body []byte, header http.Header, url string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.body, u.header, u.url
}

// SSE answers 200 with body as an event stream, flushing after each event so the client
// sees them as the wire would deliver them.
func SSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, part := range strings.SplitAfter(body, "\n\n") {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	}
}

// Drain reads s to its end and returns the events and the final error.
func Drain(t *testing.T, s llm.Stream) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	for range 100_000 {
		ev, err := s.Recv()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("stream did not end")
	return nil, nil
}

// Masked is what Scrub(key) puts in place of key.
const Masked = "[MASKED]"

// Scrub masks key, as the gateway's scrubber masks every configured credential.
func Scrub(key string) llm.Scrub {
	return func(s string) string { return strings.ReplaceAll(s, key, Masked) }
}

// Scrubbed checks that err is an *llm.Error whose text shows key nowhere (message, code,
// type, param) and whose message was masked by Scrub(key).
func Scrubbed(t *testing.T, err error, key string) {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("got %v, want an *llm.Error", err)
	}
	all := strings.Join([]string{le.Error(), le.Code, le.Type, le.Param}, " | ")
	if strings.Contains(all, key) || !strings.Contains(le.Message, Masked) {
		t.Errorf("got %q, want the key masked everywhere", all)
	}
}

// WellEnded reads s as a fuzz target checks a decoder: at most limit events, each of a known
// type with a tool index >= 0, then io.EOF right after a finish or an *llm.Error with a kind.
func WellEnded(t *testing.T, s llm.Stream, limit int) {
	t.Helper()
	var last llm.EventType
	for range limit {
		ev, err := s.Recv()
		if err == io.EOF {
			if last != llm.EvDone {
				t.Fatalf("got io.EOF after %v, want it right after the finish", last)
			}
			return
		}
		if err != nil {
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind == llm.KindNone {
				t.Fatalf("got %v (%T), want an *llm.Error with a kind", err, err)
			}
			return
		}
		if ev.Type < llm.EvStart || ev.Type > llm.EvDone || ev.Tool.Index < 0 {
			t.Fatalf("got event %+v", ev)
		}
		last = ev.Type
	}
	t.Fatal("stream did not end: more events than bytes")
}
