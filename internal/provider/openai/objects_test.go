package openai

import (
	"net/http"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// The files API through the adapter: the upload streamed, the content streamed back, the
// key and the organization header sent, an unknown id NotFound and masked (issue 48).
func TestObjectHost(t *testing.T) {
	w := providertest.ObjectWire{Root: "/v1", Auth: func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "Bearer "+testKey && r.Header.Get("OpenAI-Organization") == "org-1"
	}}
	host := func(base string) llm.ObjectHost {
		return New(Config{BaseURL: base + "/v1", APIKey: testKey, Headers: map[string]string{"OpenAI-Organization": "org-1"},
			Scrub: providertest.Scrub(testKey)})
	}
	providertest.ObjectHost(t, w, testKey, host)
	providertest.ObjectAuth(t, testKey, host)
}
