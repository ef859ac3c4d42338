package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/sse"
)

// httpKind POSTs the arguments to a tool's URL.
type httpKind struct {
	url     string
	headers map[string]string
	client  *http.Client
}

// accept lists the answers a tool may give: the result whole, or events streamed.
const accept = "application/json, text/event-stream, application/x-ndjson"

func (k *httpKind) start(ctx context.Context, args json.RawMessage, callID string, alive func()) (call, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.url, bytes.NewReader(args))
	if err != nil {
		return nil, err
	}
	for name, v := range k.headers {
		req.Header.Set(name, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	// The model's call id: a tool may key idempotency on it (a run's calls are never resent).
	req.Header.Set("X-Sluice-Tool-Call-Id", callID)
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusFailure(resp)
	}
	body := &aliveBody{ReadCloser: resp.Body, alive: alive}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		return &streamCall{body: body, f: sseFrames{sse.NewReader(body, maxEvent)}}, nil
	case mt == "application/x-ndjson" || mt == "application/jsonl":
		return &streamCall{body: body, f: ndjsonFrames{bufio.NewReaderSize(body, maxEvent)}}, nil
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxOutput+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the tool's answer: %w", err)
	case len(b) > maxOutput:
		return nil, failed(fmt.Sprintf("the tool's answer is larger than %d bytes", maxOutput))
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "":
		if !json.Valid(b) {
			return nil, failed("the tool's JSON answer is not valid JSON")
		}
		return &wholeCall{output: b}, nil
	case strings.HasPrefix(mt, "text/"):
		s, _ := json.Marshal(string(b)) // plain text: the output is that string
		return &wholeCall{output: s}, nil
	}
	return nil, failed(fmt.Sprintf("the tool answered %s, not JSON or a stream of events", mt))
}

// statusFailure is the tool's own error answer: its status and the start of its body.
func statusFailure(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	msg := strings.Join(strings.Fields(string(b)), " ")
	var e struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil { // {"error":"..."}, {"error":{"message":"..."}}, {"message":"..."}
		switch v := e.Error.(type) {
		case string:
			msg = v
		case map[string]any:
			if m, ok := v["message"].(string); ok {
				msg = m
			}
		default:
			if e.Message != "" {
				msg = e.Message
			}
		}
	}
	msg = clip(msg, 200)
	if msg == "" {
		return failed(fmt.Sprintf("the tool answered HTTP %d", resp.StatusCode))
	}
	return failed(fmt.Sprintf("the tool answered HTTP %d: %s", resp.StatusCode, msg))
}

// wholeCall is an answer that came whole: its result, and nothing to watch.
type wholeCall struct {
	output json.RawMessage
	done   bool
}

func (c *wholeCall) Streaming() bool { return false }
func (c *wholeCall) Close() error    { return nil }

func (c *wholeCall) Recv() (event, error) {
	if c.done {
		return event{}, io.EOF
	}
	c.done = true
	return event{output: c.output}, nil
}

// aliveBody calls alive whenever bytes arrive: any byte (an SSE comment, a blank NDJSON
// line) shows that a streaming tool is alive.
type aliveBody struct {
	io.ReadCloser
	alive func()
}

func (b *aliveBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.alive()
	}
	return n, err
}
