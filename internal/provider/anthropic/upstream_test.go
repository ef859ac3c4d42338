package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

const testKey = "sk-ant-test-SECRET-0123456789"

// upstream is the shared recording upstream, with a client of this adapter for it.
type upstream struct{ *providertest.Upstream }

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	return &upstream{providertest.NewUpstream(t, h)}
}

func (u *upstream) client(c Config) *Client {
	c.BaseURL = u.URL
	if c.APIKey == "" {
		c.APIKey = testKey
	}
	c.HTTPClient = u.Client()
	return New(c)
}

func testRequest() *llm.Request {
	return &llm.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}},
	}
}

// transcript encodes events and the final error one per line, deterministically, for the
// golden files.
func transcript(evs []llm.Event, end error) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s choice=%d", e.Type, e.Choice)
		switch e.Type {
		case llm.EvStart:
			fmt.Fprintf(&b, " id=%q model=%q", e.ID, e.Model)
		case llm.EvText, llm.EvRefusal:
			fmt.Fprintf(&b, " text=%q", e.Text)
		case llm.EvReasoning:
			fmt.Fprintf(&b, " field=%s text=%q encrypted=%q", e.Field, e.Text, e.Encrypted)
		case llm.EvToolCall:
			fmt.Fprintf(&b, " index=%d id=%q name=%q args=%q", e.Tool.Index, e.Tool.ID, e.Tool.Name, e.Tool.Args)
		case llm.EvUsage:
			u := e.Usage
			fmt.Fprintf(&b, " prompt=%d completion=%d total=%d cached=%d cache_write=%d reasoning=%d estimated=%v",
				u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.CachedTokens, u.CacheWriteTokens, u.ReasoningTokens, u.Estimated)
		case llm.EvDone:
			fmt.Fprintf(&b, " finish=%s", e.Finish)
		}
		b.WriteByte('\n')
	}
	if end == io.EOF {
		b.WriteString("eof\n")
	} else {
		var le *llm.Error
		if errors.As(end, &le) {
			fmt.Fprintf(&b, "error kind=%s status=%d type=%q message=%q\n", le.Kind, le.Status, le.Type, le.Message)
		} else {
			fmt.Fprintf(&b, "error %v\n", end)
		}
	}
	return b.String()
}

func openStream(t *testing.T, c *Client) llm.Stream {
	t.Helper()
	s, err := c.Stream(context.Background(), testRequest())
	if err != nil {
		t.Fatalf("Stream: got error %v, want nil", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// assemble merges events the way the relay does, so the tests can state facts about the
// answer rather than about its fragmentation.
func assemble(evs []llm.Event) *llm.Response {
	r := &llm.Response{}
	for _, e := range evs {
		switch e.Type {
		case llm.EvStart:
			r.ID, r.Model = e.ID, e.Model
		case llm.EvText:
			r.Choice(e.Choice).Text += e.Text
		case llm.EvRefusal:
			r.Choice(e.Choice).Refusal += e.Text
		case llm.EvReasoning:
			c := r.Choice(e.Choice)
			c.Reasoning += e.Text
			c.ReasoningField = e.Field
		case llm.EvToolCall:
			c := r.Choice(e.Choice)
			for len(c.ToolCalls) <= e.Tool.Index {
				c.ToolCalls = append(c.ToolCalls, llm.ToolCall{})
			}
			tc := &c.ToolCalls[e.Tool.Index]
			tc.ID += e.Tool.ID
			tc.Name += e.Tool.Name
			tc.Arguments += e.Tool.Args
		case llm.EvUsage:
			r.Usage = *e.Usage
		case llm.EvDone:
			r.Choice(e.Choice).Finish = e.Finish
		}
	}
	return r
}

func wantEOF(t *testing.T, err error) {
	t.Helper()
	if err != io.EOF {
		t.Fatalf("end: got %v, want io.EOF", err)
	}
}

func wantKind(t *testing.T, err error, k llm.Kind) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != k {
		t.Fatalf("end: got %v (kind %v), want kind %v", err, llm.KindOf(err), k)
	}
	return le
}
