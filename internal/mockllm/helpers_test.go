package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// mode is one way to reach a Server: over a real socket or through Transport.
type mode struct {
	name  string
	start func(t *testing.T, s *Server) (c *http.Client, base string, stop func())
}

var modes = []mode{
	{"http", func(t *testing.T, s *Server) (*http.Client, string, func()) {
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		return srv.Client(), srv.URL + "/v1", srv.Close
	}},
	{"transport", func(t *testing.T, s *Server) (*http.Client, string, func()) {
		return &http.Client{Transport: s.Transport()}, "http://mock.invalid/v1", func() {}
	}},
}

func newTestServer() *Server {
	return New(Options{FixturesDir: "testdata", Now: func() time.Time { return time.Unix(1700000000, 0) }})
}

// chatBody is a request for model with one user message.
func chatBody(model, user string, stream, includeUsage bool) []byte {
	req := map[string]any{
		"model":    model,
		"messages": []map[string]any{{"role": "user", "content": user}},
		"stream":   stream,
	}
	if includeUsage {
		req["stream_options"] = map[string]any{"include_usage": true}
	}
	b, _ := json.Marshal(req)
	return b
}

func post(ctx context.Context, c *http.Client, base string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.Do(req)
}

// facts are what a client can tell from a Chat Completions stream.
type facts struct {
	content   []string // per choice
	reasoning string   // both fields, choice 0
	refusal   string
	calls     []string // name(args), choice 0
	ids       []string // tool-call ids, in order
	finish    []string
	deltas    int // content, refusal and reasoning deltas, all choices
	logprobs  int // deltas carrying logprobs content
	usage     *openai.Usage
	usageNull int // chunks with "usage":null
	done      bool
	errCode   string // code of an in-stream error, or its type when code is null
	errEvent  bool   // the error came as "event: error"
	tail      string // bytes after the last blank line
	ids0      string // the id of the first chunk
}

type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			Refusal          *string `json:"refusal"`
			Reasoning        *string `json:"reasoning"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		Logprobs *struct {
			Content []openai.TokenLogprob `json:"content"`
		} `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error *struct {
		Type string  `json:"type"`
		Code *string `json:"code"`
	} `json:"error"`
}

func parseStream(t *testing.T, body []byte) facts {
	t.Helper()
	var f facts
	s := string(body)
	var names, args []string
	for {
		i := strings.Index(s, "\n\n")
		if i < 0 {
			f.tail = s
			break
		}
		ev := s[:i]
		s = s[i+2:]
		if rest, ok := strings.CutPrefix(ev, "event: error\n"); ok {
			f.errEvent, ev = true, rest
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event %q: want a data: line", ev)
		}
		if data == "[DONE]" {
			f.done = true
			continue
		}
		var c wireChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if c.Error != nil {
			f.errCode = c.Error.Type
			if c.Error.Code != nil {
				f.errCode = *c.Error.Code
			}
			continue
		}
		if f.ids0 == "" {
			f.ids0 = c.ID
		}
		if c.ID != f.ids0 || c.Object != "chat.completion.chunk" {
			t.Errorf("chunk id %q object %q, want %q chat.completion.chunk", c.ID, c.Object, f.ids0)
		}
		if string(c.Usage) == "null" {
			f.usageNull++
		} else if c.Usage != nil {
			f.usage = new(openai.Usage)
			json.Unmarshal(c.Usage, f.usage)
		}
		for _, ch := range c.Choices {
			for len(f.content) <= ch.Index {
				f.content = append(f.content, "")
			}
			d := ch.Delta
			if d.Role != "" {
				continue // the role chunk
			}
			if ch.FinishReason != nil {
				f.finish = append(f.finish, *ch.FinishReason)
			}
			if ch.Logprobs != nil && len(ch.Logprobs.Content) > 0 {
				f.logprobs++
			}
			for _, p := range []*string{d.Content, d.Refusal, d.Reasoning, d.ReasoningContent} {
				if p != nil {
					f.deltas++
				}
			}
			if d.Content != nil {
				f.content[ch.Index] += *d.Content
			}
			if ch.Index != 0 {
				continue
			}
			if d.Refusal != nil {
				f.refusal += *d.Refusal
			}
			if d.Reasoning != nil {
				f.reasoning += *d.Reasoning
			}
			if d.ReasoningContent != nil {
				f.reasoning += *d.ReasoningContent
			}
			for _, tc := range d.ToolCalls {
				if tc.ID != "" {
					f.ids = append(f.ids, tc.ID)
					names = append(names, tc.Function.Name)
					args = append(args, "")
				}
				args[tc.Index] += tc.Function.Arguments
			}
		}
	}
	for i := range names {
		f.calls = append(f.calls, names[i]+"("+args[i]+")")
	}
	return f
}
