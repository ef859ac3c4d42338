package anthropic

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

const objectKey = "sk-ant-SECRET-objects-0123"

// Anthropic's message batches through the adapter: x-api-key and anthropic-version sent,
// the body streamed, the results JSONL streamed back, an unknown id NotFound and masked,
// a refused key Auth (issue 48).
func TestObjectHost(t *testing.T) {
	w := providertest.ObjectWire{Root: "/v1", Auth: func(r *http.Request) bool {
		return r.Header.Get("X-Api-Key") == objectKey && r.Header.Get("Anthropic-Version") == DefaultVersion
	}}
	host := func(base string) llm.ObjectHost {
		return New(Config{BaseURL: base, APIKey: objectKey, Scrub: providertest.Scrub(objectKey)})
	}
	providertest.ObjectHost(t, w, objectKey, host)
	providertest.ObjectAuth(t, objectKey, host)

	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/messages/batches" || r.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), "custom_id") {
			rw.WriteHeader(400)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, `{"id":"msgbatch_1","type":"message_batch","processing_status":"in_progress"}`)
	}))
	defer srv.Close()
	body := `{"requests":[{"custom_id":"a","params":{"model":"m","max_tokens":5,"messages":[]}}]}`
	a, err := host(srv.URL).Object(context.Background(), llm.ObjectCall{Method: "POST", Path: "messages/batches",
		ContentType: "application/json", Body: strings.NewReader(body), Length: int64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Body.Close()
	if b, _ := io.ReadAll(a.Body); !strings.Contains(string(b), "msgbatch_1") {
		t.Errorf("create answered %s", b)
	}
}
