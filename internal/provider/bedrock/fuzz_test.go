package bedrock

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// FuzzStream feeds arbitrary bodies to the event-stream decoder: it never panics, always
// ends, ends with io.EOF or an *llm.Error with a kind, and io.EOF only right after a finish.
func FuzzStream(f *testing.F) {
	for _, p := range fixtures(f) {
		f.Add(bytes.Join(fixtureFrames(f, p), nil))
	}
	all := bytes.Join(textAnswer(f), nil)
	f.Add(all)
	f.Add(all[:len(all)-7])
	f.Add(append(bytes.Join(textAnswer(f)[:2], nil), exceptionFrame(f, "throttlingException", "slow down")...))
	// Reasoning with its signature, redacted content, and the cache usage by TTL (issue 46).
	f.Add(bytes.Join([][]byte{
		frame(f, "messageStart", `{"role":"assistant"}`),
		frame(f, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"hm","signature":"EqQB+/=="}}}`),
		frame(f, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"AP9yZWQQ"}}}`),
		frame(f, "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"reasoningContent":{"redactedContent":"not base64"}}}`),
		frame(f, "messageStop", `{"stopReason":"end_turn"}`),
		frame(f, "metadata", `{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":9,"cacheWriteInputTokens":7,"cacheDetails":[{"ttl":"1h","inputTokens":9},{"ttl":5}]}}`),
	}, nil))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(context.Background(), origin{name: "bedrock"}, "", "m", io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		providertest.WellEnded(t, s, len(body)+2)
	})
}

// FuzzPlain feeds arbitrary Converse answers to the plain decoder: it never panics and ends
// well, whatever the reasoning (signature, redacted bytes) and usage (cacheDetails) hold.
func FuzzPlain(f *testing.F) {
	f.Add([]byte(`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"EqQB+/=="}}},` +
		`{"reasoningContent":{"redactedContent":"AP9yZWQQ"}},{"text":"a"}]}},"stopReason":"end_turn",` +
		`"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":9,"cacheWriteInputTokens":7,"cacheDetails":[{"ttl":"1h","inputTokens":7}]}}`))
	f.Add([]byte(`{"output":{"message":{"content":[{"reasoningContent":{"redactedContent":"!"}}]}},"stopReason":"end_turn"}`))
	f.Add([]byte(`{"stopReason":"end_turn","usage":{"cacheDetails":[{"ttl":null}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newPlainStream(context.Background(), origin{name: "bedrock"}, "", "m", 1, io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		providertest.WellEnded(t, s, len(body)+16)
	})
}
