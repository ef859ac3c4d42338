package azure

import (
	"net/http"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

const objectKey = "azure-SECRET-objects-0123"

// Azure's files API on the v1 paths (/openai/v1/files) with the api-key, and on the
// versioned paths (/openai/files?api-version=) of a deployments configuration (issue 48).
func TestObjectHost(t *testing.T) {
	for _, deployments := range []bool{false, true} {
		root := "/openai/v1"
		if deployments {
			root = "/openai"
		}
		w := providertest.ObjectWire{Root: root, Auth: func(r *http.Request) bool {
			versioned := r.URL.Query().Get("api-version") == "2025-04-01-preview"
			return r.Header.Get("api-key") == objectKey && versioned == deployments
		}}
		host := func(base string) llm.ObjectHost {
			return New(Config{Endpoint: base, APIKey: objectKey, Deployments: deployments, APIVersion: "2025-04-01-preview",
				Scrub: providertest.Scrub(objectKey)})
		}
		providertest.ObjectHost(t, w, objectKey, host)
		providertest.ObjectAuth(t, objectKey, host)
	}
}
