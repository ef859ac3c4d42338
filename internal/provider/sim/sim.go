// Package sim is the built-in simulated provider: the mock upstream's scripts (package
// mockllm) served in-process, behind the real adapters, so the gateway runs end to end with
// no API key and no network. The model name is the script ("sim/echo",
// "sim/text?len=200&chunk=5"); the provider's api says which wire the mock speaks and so which
// adapter reads it.
package sim

import (
	"fmt"
	"net/http"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/openai"
)

// APIs are the wires a simulated provider speaks.
var APIs = []string{"chat", "responses", "anthropic"}

// New returns a provider that answers with the mock's scripts without a socket, over api:
// "" or "chat" (Chat Completions), "responses" or "anthropic". The adapters and the wire bytes
// are the real ones; only the transport is in-process.
func New(name, api string) (llm.Provider, error) {
	hc := &http.Client{Transport: mockllm.New(mockllm.Options{}).Transport()}
	oc := openai.Config{Name: name, BaseURL: "http://sim.invalid/v1", APIKey: "sim", HTTPClient: hc}
	switch api {
	case "", "chat":
		return openai.New(oc), nil
	case "responses":
		return openai.NewResponses(oc), nil
	case "anthropic":
		return anthropic.New(anthropic.Config{Name: name, BaseURL: "http://sim.invalid", APIKey: "sim", HTTPClient: hc}), nil
	}
	return nil, fmt.Errorf("sim: unknown api %q (want chat, responses or anthropic)", api)
}
