// Package sim is the built-in simulated provider: the mock upstream's scripts (package
// mockllm) served in-process, behind the real OpenAI adapter, so the gateway runs end to end
// with no API key and no network. The model name is the script ("sim/echo",
// "sim/text?len=200&chunk=5").
package sim

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/openai"
)

// New returns a provider that answers with the mock's scripts without a socket. The adapter
// and the wire bytes are the real ones; only the transport is in-process.
func New(name string) *openai.Client {
	m := mockllm.New(mockllm.Options{})
	return openai.New(openai.Config{
		Name:       name,
		BaseURL:    "http://sim.invalid/v1",
		APIKey:     "sim",
		HTTPClient: &http.Client{Transport: m.Transport()},
	})
}
