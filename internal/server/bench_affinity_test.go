package server_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// BenchmarkChatGroup is BenchmarkChat with the alias a weighted group of two equal targets
// (issue 46), with affinity off (the pick by weight alone) and on (the default for a group:
// each request hashes its prefix and looks its conversation up, in memory here). The
// difference is what keeping a conversation on its member costs the request path.
func BenchmarkChatGroup(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	for _, affinity := range []string{"off", "conversation"} {
		cfg, err := config.ParseWith([]byte(`
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  mock2: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  default: {targets: [{group: ["mock/text?len=200&chunk=10", "mock2/text?len=200&chunk=10"]}], affinity: `+affinity+`}
`), "bench.yaml", func(k string) (string, bool) { return ms.URL, k == "MOCK_URL" })
		if err != nil {
			b.Fatal(err)
		}
		srv, err := gw.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { srv.Close() })
		b.Run(affinity+"/nonstream", func(b *testing.B) { benchPost(b, srv, false) })
		b.Run(affinity+"/stream", func(b *testing.B) { benchPost(b, srv, true) })
	}
}
