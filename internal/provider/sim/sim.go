// Package sim is the built-in simulated provider: the mock upstream's scripts (package
// mockllm) served in-process, behind the real adapters, so the gateway runs end to end with
// no API key and no network. The model name is the script ("sim/echo",
// "sim/text?len=200&chunk=5"); the provider's api says which wire the mock speaks and so which
// adapter reads it.
//
// A sim provider also simulates a provider's prompt cache (issue 46), so that `make run` and
// the tests show conversation affinity paying off: a repeated prefix on the same target
// reports cache reads. The cache belongs to the provider (one per gateway process and
// provider; each model name is a cache of its own) and holds at most 10k prefixes, each
// expiring 5 minutes (1 hour for a breakpoint with ttl 1h) after it was last written or read.
// The rule:
//
//   - The cacheable prefix is the prompt (tools, then the messages, system first, block by
//     block) up to and including its last cache breakpoint (llm.Request.CacheMarks); without
//     breakpoints, the whole prompt but its last message, once that is at least 1024
//     estimated tokens (OpenAI's implicit caching).
//   - The longest prefix of it that an earlier request cached, ending at any block, is a hit:
//     its estimated tokens are reported as CachedTokens.
//   - With breakpoints, the prompt up to each breakpoint is cached, and what lies beyond the
//     hit up to the last breakpoint is reported written (CacheWriteTokens; the segments that
//     end at a 1h breakpoint in CacheWrite1hTokens too). Without breakpoints nothing is
//     reported written, only read by later requests.
//   - Tokens are internal/usage's estimate (four bytes a token); the reported PromptTokens
//     hold the cache's (at least the whole prompt's estimate). A request the cache does
//     nothing for is reported as the mock reports it.
package sim

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/openai"
)

// APIs are the wires a simulated provider speaks.
var APIs = []string{"chat", "responses", "anthropic"}

// New returns a provider that answers with the mock's scripts without a socket, over api:
// "" or "chat" (Chat Completions), "responses" or "anthropic". The adapters and the wire bytes
// are the real ones; only the transport is in-process. The provider's other abilities
// (embeddings, the Responses API, token counts) are its adapter's, unchanged.
func New(name, api string) (llm.Provider, error) {
	hc := &http.Client{Transport: mockllm.New(mockllm.Options{}).Transport()}
	oc := openai.Config{Name: name, BaseURL: "http://sim.invalid/v1", APIKey: "sim", HTTPClient: hc}
	pc := newPromptCache()
	switch api {
	case "", "chat":
		return chat{openai.New(oc), pc}, nil
	case "responses":
		return responses{openai.NewResponses(oc), pc}, nil
	case "anthropic":
		return messages{anthropic.New(anthropic.Config{Name: name, BaseURL: "http://sim.invalid", APIKey: "sim", HTTPClient: hc}), pc}, nil
	}
	return nil, fmt.Errorf("sim: unknown api %q (want chat, responses or anthropic)", api)
}

// chat, responses and messages are the adapters with the cache in front of Stream; the
// embedding keeps every other method of the adapter (a type parameter cannot be embedded).
type (
	chat struct {
		*openai.Client
		cache *promptCache
	}
	responses struct {
		*openai.Responses
		cache *promptCache
	}
	messages struct {
		*anthropic.Client
		cache *promptCache
	}
)

func (p chat) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	return p.cache.stream(ctx, p.Client, req)
}

func (p responses) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	return p.cache.stream(ctx, p.Responses, req)
}

func (p messages) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	return p.cache.stream(ctx, p.Client, req)
}

// stream calls up with req and reports what the cache did in the stream's usage.
func (c *promptCache) stream(ctx context.Context, up llm.Provider, req *llm.Request) (llm.Stream, error) {
	u, commit := c.plan(req, time.Now())
	s, err := up.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	commit()
	if u.zero() {
		return s, nil
	}
	cs := &cachedStream{Stream: s, use: u}
	if w, ok := s.(llm.Waiter); ok {
		return waiterStream{cs, w}, nil
	}
	return cs, nil
}

// cachedStream is an upstream stream whose usage reports the simulated cache's tokens.
type cachedStream struct {
	llm.Stream
	use use
}

func (s *cachedStream) Recv() (llm.Event, error) {
	ev, err := s.Stream.Recv()
	if err == nil && ev.Type == llm.EvUsage && ev.Usage != nil {
		u := *ev.Usage // the adapter's value, not changed in place
		s.use.apply(&u)
		ev.Usage = &u
	}
	return ev, err
}

// waiterStream is a cachedStream over a stream that is an llm.Waiter, and so one too.
type waiterStream struct {
	*cachedStream
	w llm.Waiter
}

func (s waiterStream) BeforeWait(f func()) { s.w.BeforeWait(f) }
