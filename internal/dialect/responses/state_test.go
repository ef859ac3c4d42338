package responses

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/dialect"
)

// mapStore is a dialect.Store in a map, for one test.
type mapStore map[string][]byte

func (m mapStore) Get(_ context.Context, id string) ([]byte, error) { return m[id], nil }
func (m mapStore) Add(_ context.Context, id string, v []byte, _ time.Duration) (bool, error) {
	if m[id] != nil {
		return false, nil
	}
	m[id] = v
	return true, nil
}
func (m mapStore) Delete(_ context.Context, id string) (bool, error) {
	_, ok := m[id]
	delete(m, id)
	return ok, nil
}

// A stored conversation's opaque reasoning goes where it can be read: OpenAI's encrypted
// content to a Responses target only (in the body it gets), another provider's signature to
// the other adapters only (in the vocabulary).
func TestResumeEncryptedReasoning(t *testing.T) {
	st := mapStore{"resp_1": []byte(`{"key":"k1","response":{},"input":[{"type":"message","role":"user","content":"hi"}],` +
		`"output":[{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAABopenai"},` +
		`{"id":"rs_2","type":"reasoning","summary":[],"encrypted_content":"EqQBsignature"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}]}`)}
	state := &dialect.State{Store: st, TTL: func(string) time.Duration { return time.Hour }}
	for _, key := range []string{"k1", "k2"} {
		d, err := API.Decode([]byte(`{"model":"m","input":"next","previous_response_id":"resp_1","store":true}`), dialect.Input{State: state, Key: key})
		if err != nil || d.Needs != "" {
			t.Fatalf("Decode: got %v, needs %q; want any target", err, d.Needs)
		}
		err = d.Resumed(context.Background())
		if key == "k2" {
			if err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("another key's id: got %v, want previous_response_not_found", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		body := string(mustItems(t, field(d.Req.Native, "input")))
		if !strings.Contains(body, "gAAAAABopenai") || strings.Contains(body, "EqQBsignature") || !strings.HasSuffix(body, `"content":"next"}]`) {
			t.Errorf("a Responses target's input: got %s, want OpenAI's reasoning, no signature, then the new input", body)
		}
		if f := field(d.Req.Native, "store"); string(f) != "false" || field(d.Req.Native, "previous_response_id") != nil {
			t.Errorf("got store %s and previous_response_id %s upstream, want false and none", f, field(d.Req.Native, "previous_response_id"))
		}
		msgs := d.Req.Messages
		if len(msgs) != 3 || len(msgs[1].Reasoning) != 2 || msgs[1].Reasoning[0].Encrypted != "" || msgs[1].Reasoning[1].Encrypted != "EqQBsignature" {
			t.Errorf("the vocabulary: got %+v, want user, assistant with the signature only, user", msgs)
		}
	}
}

func mustItems(t *testing.T, raw []byte) []byte {
	t.Helper()
	if len(raw) == 0 {
		t.Fatal("no input")
	}
	return raw
}
