package anthropic

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// What the upstream writes in an error (message and type), in a status error or an error
// event before or after text, is scrubbed before it becomes an *llm.Error.
func TestErrorsScrubbed(t *testing.T) {
	echo := `{"type":"error","error":{"type":"t ` + testKey + `","message":"x-api-key: ` + testKey + `"}}`
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"
	text := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
	for _, tt := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"status 400", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, echo)
		}},
		{"status 529", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(529)
			io.WriteString(w, echo)
		}},
		{"error event before text", providertest.SSE(start + "event: error\ndata: " + echo + "\n\n")},
		{"error event after text", providertest.SSE(start + text + "event: error\ndata: " + echo + "\n\n")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tt.h)
			var err error
			s, err := u.client(Config{Scrub: providertest.Scrub(testKey)}).Stream(context.Background(), testRequest())
			if err == nil {
				defer s.Close()
				for err == nil {
					_, err = s.Recv()
				}
			}
			providertest.Scrubbed(t, err, testKey)
		})
	}
}
