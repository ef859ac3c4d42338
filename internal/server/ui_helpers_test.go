package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// uiBody is an AI SDK request body: one user message, for chat id chat.
func uiBody(chat, model, text string) string {
	m, _ := json.Marshal(model)
	t, _ := json.Marshal(text)
	return `{"id":"` + chat + `","model":` + string(m) + `,"trigger":"submit-message","messages":[` +
		`{"id":"u1","role":"user","parts":[{"type":"text","text":` + string(t) + `}]}]}`
}

// uiDo sends a request with the key (none: "") and headers (name, value pairs), and returns
// the response with its body unread; ctx cancels it.
func uiDo(t *testing.T, ctx context.Context, method, url, key, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseFrames reads whole frames ("id: ...\ndata: ...\n\n") from r until its end or until n
// frames were read (n < 0: all); keepalive comments are left out. To read on after n frames,
// pass a *bufio.Reader: what it buffered is kept for the next call.
func sseFrames(t *testing.T, r io.Reader, n int) []string {
	t.Helper()
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	var out []string
	var cur strings.Builder
	for n < 0 || len(out) < n {
		line, err := br.ReadString('\n')
		if line == "\n" {
			if cur.Len() > 0 {
				out = append(out, cur.String()+"\n")
				cur.Reset()
			}
		} else if strings.HasPrefix(line, ":") {
			// a keepalive
		} else {
			cur.WriteString(line)
		}
		if err != nil {
			break
		}
	}
	return out
}

// frameData is the data line of a frame.
func frameData(f string) string {
	_, d, _ := strings.Cut(f, "data: ")
	return strings.TrimSuffix(d, "\n\n")
}

// frameID is the id line of a frame.
func frameID(f string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(f, "id: "), "\n")
	return id
}

// chunkTypes lists the chunk types of frames.
func chunkTypes(t *testing.T, frames []string) []string {
	t.Helper()
	var out []string
	for _, f := range frames {
		d := frameData(f)
		if d == "[DONE]" {
			out = append(out, "[DONE]")
			continue
		}
		var c struct{ Type string }
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		out = append(out, c.Type)
	}
	return out
}

// uiText is the text a client keeps of frames: reset-step drops the step's text.
func uiText(t *testing.T, frames []string) string {
	t.Helper()
	var kept, step strings.Builder
	for _, f := range frames {
		var c struct{ Type, Delta string }
		_ = json.Unmarshal([]byte(frameData(f)), &c)
		switch c.Type {
		case "text-delta":
			step.WriteString(c.Delta)
		case "reset-step":
			step.Reset()
		case "finish-step":
			kept.WriteString(step.String())
			step.Reset()
		}
	}
	return kept.String() + step.String()
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
