package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// postTo sends body to path with a fixed request id, so bodies are deterministic.
func postTo(t *testing.T, url, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func respBody(model string, stream bool, extra string) string {
	s := `{"model":` + quote(model) + `,"input":"Hello there, gateway."`
	if stream {
		s += `,"stream":true`
	}
	return s + extra + "}"
}

// respEvent is one frame of a Responses stream.
type respEvent struct {
	typ  string
	data map[string]any
}

func (e respEvent) str(k string) string { s, _ := e.data[k].(string); return s }

// respStream reads a whole Responses stream and checks its framing: every frame is an
// `event:` line naming the data's type, then one `data:` line; sequence_number counts from 0;
// nothing follows the terminal event, and there is never a [DONE]. raw is the body.
func respStream(t *testing.T, r io.Reader) (evs []respEvent, raw string) {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	raw = string(b)
	sc := bufio.NewScanner(strings.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			if event != "" {
				t.Errorf("got two event lines in a row (%q)", line)
			}
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			d := strings.TrimPrefix(line, "data: ")
			if d == "[DONE]" {
				t.Fatalf("got [DONE] on a Responses stream")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("got data %s, want JSON: %v", d, err)
			}
			ev := respEvent{typ: event, data: m}
			if ev.str("type") != event {
				t.Errorf("got event %q with data type %q, want them equal", event, ev.str("type"))
			}
			if n, _ := m["sequence_number"].(float64); int(n) != len(evs) {
				t.Errorf("event %d (%s): got sequence_number %v, want %d", len(evs), event, m["sequence_number"], len(evs))
			}
			if len(evs) > 0 && terminal(evs[len(evs)-1].typ) {
				t.Errorf("got %s after the terminal %s", event, evs[len(evs)-1].typ)
			}
			evs = append(evs, ev)
			event = ""
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return evs, raw
}

func terminal(typ string) bool {
	return typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed"
}

// assembled is what a client builds from a Responses stream's deltas.
type assembled struct {
	text, refusal, summary string
	args                   []string
	final                  map[string]any // the terminal event's response
	last                   string         // the terminal event's type
	err                    *respEvent     // the error event, if any
}

func assemble(evs []respEvent) *assembled {
	a := &assembled{}
	for i, e := range evs {
		switch e.typ {
		case "response.output_text.delta":
			a.text += e.str("delta")
		case "response.refusal.delta":
			a.refusal += e.str("delta")
		case "response.reasoning_summary_text.delta":
			a.summary += e.str("delta")
		case "response.function_call_arguments.delta":
			a.args = append(a.args, e.str("delta"))
		case "error":
			a.err = &evs[i]
		}
		if terminal(e.typ) {
			a.final, _ = e.data["response"].(map[string]any)
			a.last = e.typ
		}
	}
	return a
}

var createdAtRE = regexp.MustCompile(`"created_at":\d+`)

// fakeProvider answers every call with its events; it may claim the Responses API.
type fakeProvider struct {
	events    []llm.Event
	responses bool

	mu    sync.Mutex
	calls int
	last  *llm.Request
}

func (f *fakeProvider) Stream(_ context.Context, req *llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.last = req.Clone()
	return &fakeStream{evs: f.events}, nil
}

func (f *fakeProvider) ResponsesAPI() bool { return f.responses }

func (f *fakeProvider) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type fakeStream struct{ evs []llm.Event }

func (s *fakeStream) Recv() (llm.Event, error) {
	if len(s.evs) == 0 {
		return llm.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func (s *fakeStream) Close() error { return nil }
