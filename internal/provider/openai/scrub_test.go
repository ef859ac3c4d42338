package openai

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// Whatever the upstream writes in an error (message, code, type, param), in a status error,
// an in-stream error after text, a Responses response.failed or an embeddings error, is
// scrubbed before it becomes an *llm.Error.
func TestErrorsScrubbed(t *testing.T) {
	echo := `{"error":{"message":"bad key ` + testKey + `","type":"t ` + testKey + `","param":"p ` + testKey + `","code":"c ` + testKey + `"}}`
	respFailed := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"output\":[],\"error\":{\"code\":\"c " + testKey + "\",\"message\":\"bad key " + testKey + "\"}}}\n\n"
	tests := []struct {
		name string
		h    http.HandlerFunc
		call func(u *upstream) error
	}{
		{"status 400", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, echo)
		}, chatCall},
		{"status 500 plain text", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, "upstream saw Authorization: Bearer "+testKey)
		}, chatCall},
		{"in-stream after text", providertest.SSE(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}` + "\n\n" +
			"data: " + echo + "\n\n"), chatCall},
		{"responses failed", providertest.SSE(respFailed), func(u *upstream) error {
			s, err := u.responses(Config{Scrub: providertest.Scrub(testKey)}).Stream(context.Background(), testRequest())
			if err != nil {
				return err
			}
			defer s.Close()
			return drainErr(s)
		}},
		{"embeddings 200 error", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, echo)
		}, func(u *upstream) error {
			_, err := u.client(Config{Scrub: providertest.Scrub(testKey)}).Plain(context.Background(), "embeddings", "m", []byte(`{"input":"x"}`))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			providertest.Scrubbed(t, tt.call(newUpstream(t, tt.h)), testKey)
		})
	}
}

func chatCall(u *upstream) error {
	s, err := u.client(Config{Scrub: providertest.Scrub(testKey)}).Stream(context.Background(), testRequest())
	if err != nil {
		return err
	}
	defer s.Close()
	return drainErr(s)
}

// drainErr reads s to its end and returns the error it ended with (nil for a clean end).
func drainErr(s llm.Stream) error {
	for {
		if _, err := s.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
