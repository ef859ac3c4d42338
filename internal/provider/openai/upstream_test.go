package openai

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

const testKey = "sk-test-SECRET-0123456789"

// upstream is the shared recording upstream, with a client of this adapter for it.
type upstream struct{ *providertest.Upstream }

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	return &upstream{providertest.NewUpstream(t, h)}
}

func (u *upstream) client(c Config) *Client {
	c.BaseURL = u.URL + "/v1"
	if c.APIKey == "" {
		c.APIKey = testKey
	}
	c.HTTPClient = u.Client()
	return New(c)
}

func testRequest() *llm.Request {
	return &llm.Request{
		Model:    "gpt-4o",
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
			fmt.Fprintf(&b, " field=%s text=%q", e.Field, e.Text)
			if e.Encrypted != "" {
				fmt.Fprintf(&b, " id=%q encrypted=%q", e.ID, e.Encrypted)
			}
		case llm.EvToolCall:
			fmt.Fprintf(&b, " index=%d id=%q name=%q args=%q", e.Tool.Index, e.Tool.ID, e.Tool.Name, e.Tool.Args)
		case llm.EvLogprobs:
			fmt.Fprintf(&b, " raw=%s", e.Raw)
		case llm.EvItem:
			fmt.Fprintf(&b, " index=%d raw=%s", e.Tool.Index, e.Raw)
			for _, p := range e.Progress {
				fmt.Fprintf(&b, " progress=%s", p)
			}
		case llm.EvUsage:
			u := e.Usage
			fmt.Fprintf(&b, " prompt=%d completion=%d total=%d cached=%d reasoning=%d",
				u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.CachedTokens, u.ReasoningTokens)
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
			fmt.Fprintf(&b, "error kind=%s code=%q type=%q message=%q\n", le.Kind, le.Code, le.Type, le.Message)
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
