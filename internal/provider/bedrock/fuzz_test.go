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
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(context.Background(), origin{name: "bedrock"}, "", "m", io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		providertest.WellEnded(t, s, len(body)+2)
	})
}
