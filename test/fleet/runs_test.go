package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// uiBody is an AI SDK request body for chat on model.
func uiBody(chat, model string) string {
	return fmt.Sprintf(`{"id":%q,"model":%q,"trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hello fleet"}]}]}`, chat, model)
}

// uiStream is a UI message stream being read: its replica, and a reader of its chunks.
type uiStream struct {
	replica string
	resp    *http.Response
	sc      *bufio.Scanner
}

func openUI(t *testing.T, method, url, key, body string) *uiStream {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &uiStream{replica: resp.Header.Get("X-Sluice-Replica"), resp: resp, sc: sc}
}

// chunk is one UI stream chunk, as far as these tests read it.
type chunk struct {
	Type      string `json:"type"`
	Delta     string `json:"delta"`
	ErrorText string `json:"errorText"`
}

// next returns the next chunk; "[DONE]" as its type at the end marker; false at the end of the
// body.
func (s *uiStream) next() (chunk, bool) {
	for s.sc.Scan() {
		d, ok := strings.CutPrefix(s.sc.Text(), "data: ")
		if !ok {
			continue
		}
		if d == "[DONE]" {
			return chunk{Type: "[DONE]"}, true
		}
		var c chunk
		if json.Unmarshal([]byte(d), &c) == nil {
			return c, true
		}
	}
	return chunk{}, false
}

// rest reads the stream to its end: the text, the error text if an error chunk came, the
// last chunk type before [DONE] (or before the body ended), and whether [DONE] came.
func (s *uiStream) rest() (text, errText, last string, done bool) {
	for {
		c, ok := s.next()
		if !ok {
			return text, errText, last, false
		}
		if c.Type == "[DONE]" {
			return text, errText, last, true
		}
		switch c.Type {
		case "text-delta":
			text += c.Delta
		case "error":
			errText = c.ErrorText
		}
		last = c.Type
	}
}

// resumeOnAnotherReplica (b): a run started on replica 1, whose client disconnects, is
// resumed on replica 2 and ends with the same final message as an uninterrupted run (on the
// last replica).
func resumeOnAnotherReplica(t *testing.T, f *fleet) {
	key := f.key(t, `{"name":"resume"}`)
	whole := openUI(t, "POST", f.nodes[len(f.nodes)-1]+"/v1/ui/chat", key, uiBody("chat-whole", "slow"))
	want, _, _, done := whole.rest()
	if !done || want == "" {
		t.Fatalf("an uninterrupted run: done %v text %q", done, want)
	}

	first := openUI(t, "POST", f.nodes[0]+"/v1/ui/chat", key, uiBody("chat-b", "slow"))
	for n := 0; n < 5; {
		c, ok := first.next()
		if !ok {
			t.Fatal("the run ended before the client left")
		}
		if c.Type == "text-delta" {
			n++
		}
	}
	first.resp.Body.Close() // the client leaves; the run goes on

	again := openUI(t, "GET", f.nodes[1]+"/v1/ui/chat/chat-b/stream", key, "")
	if again.replica == first.replica || again.replica == "" {
		t.Errorf("resumed on replica %q, started on %q: want another replica", again.replica, first.replica)
	}
	got, errText, last, done := again.rest()
	if !done || last != "finish" || errText != "" || got != want {
		t.Errorf("resumed run: done %v, last chunk %q, text %q; want the whole run's text %q then finish", done, last, got, want)
	}
}

// killedReplica (c): a replica killed with SIGKILL mid-run: its client's stream breaks, new
// requests through nginx succeed on the others, and the run ends with an error on a reader of
// another replica once its owner lease lapses.
func killedReplica(t *testing.T, f *fleet) {
	key := f.key(t, `{"name":"kill"}`)
	s := openUI(t, "POST", f.nodes[0]+"/v1/ui/chat", key, uiBody("chat-c", "slow"))
	for n := 0; n < 3; {
		c, ok := s.next()
		if !ok {
			t.Fatal("the run ended before the kill")
		}
		if c.Type == "text-delta" {
			n++
		}
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "pids", "gateway-1.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, done := s.rest(); done {
		t.Error("the killed replica's client got a whole stream, want it broken")
	}
	// nginx may still send one request over a kept-alive connection to the dead replica: it
	// answers that one 502 (a POST already sent is never replayed on another replica) and
	// then skips the replica for its fail_timeout. Every request after that one succeeds.
	failed := 0
	for i := range 8 {
		r := do(t, "POST", f.url+"/v1/chat/completions", key, chat("default", false))
		if r.status == http.StatusBadGateway && i == failed && failed < 1 {
			failed++
			continue
		}
		if r.status != 200 || r.header.Get("X-Sluice-Replica") == "gateway-1" {
			t.Errorf("request %d after the kill: %d from %q, want 200 from another replica", i, r.status, r.header.Get("X-Sluice-Replica"))
		}
	}
	start := time.Now()
	r := openUI(t, "GET", f.nodes[1]+"/v1/ui/chat/chat-c/stream", key, "")
	_, errText, last, done := r.rest()
	if !done || last != "finish" || !strings.Contains(errText, "lost") {
		t.Errorf("a reader of the orphaned run: done %v, error %q, last chunk %q; want the error end, then finish", done, errText, last)
	}
	t.Logf("the orphaned run ended %v after the resume began", time.Since(start).Round(100*time.Millisecond))
}
