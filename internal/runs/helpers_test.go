package runs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/sim"
	"github.com/sluice-gw/sluice/internal/uistream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chain is an alias over the mock's scripts, in process.
func chain(t *testing.T, scripts ...string) *fallback.Chain {
	t.Helper()
	p, err := sim.New("sim", "")
	if err != nil {
		t.Fatal(err)
	}
	ch := &fallback.Chain{Alias: "a", CommitOnReasoning: true}
	for _, s := range scripts {
		ch.Targets = append(ch.Targets, fallback.Target{Name: "sim/" + s, Model: s, Provider: p})
	}
	return ch
}

func spec(chat string, ch *fallback.Chain, restart bool) Spec {
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}}
	return Spec{Chat: chat, Key: "k1", Version: uistream.V7, Model: "a", Request: req, Chain: ch.Start(req), Restart: restart}
}

// manager is a replica on store, closed at cleanup.
func manager(t *testing.T, store Store, o Options) *Manager {
	t.Helper()
	o.Store = store
	if o.Lease == 0 {
		o.Lease = 600 * time.Millisecond
	}
	m := NewManager(o)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// drain reads rd to its end: the frames and the error that ended it (nil for io.EOF).
func drain(t *testing.T, rd *Reader) ([]string, error) {
	t.Helper()
	defer rd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	for {
		b, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(b))
	}
}

// types lists the chunk types of frames ("DONE" for [DONE]).
func types(t *testing.T, frames []string) string {
	t.Helper()
	var ts []string
	for _, f := range frames {
		c := chunk(t, f)
		if c == nil {
			ts = append(ts, "DONE")
			continue
		}
		ts = append(ts, c["type"].(string))
	}
	return strings.Join(ts, ",")
}

// squeeze collapses repeated neighbours of a type list ("a,b,b,c" -> "a,b+,c").
func squeeze(s string) string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if n := len(out); n > 0 && strings.TrimSuffix(out[n-1], "+") == x {
			out[n-1] = x + "+"
			continue
		}
		out = append(out, x)
	}
	return strings.Join(out, ",")
}

func chunk(t *testing.T, frame string) map[string]any {
	t.Helper()
	i := strings.Index(frame, "data: ")
	data := strings.TrimSuffix(frame[i+6:], "\n\n")
	if data == "[DONE]" {
		return nil
	}
	var c map[string]any
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("frame %q: %v", frame, err)
	}
	return c
}

// text is the text the client keeps, dropping a step's text at reset-step.
func text(t *testing.T, frames []string) string {
	var kept, step strings.Builder
	for _, f := range frames {
		c := chunk(t, f)
		switch {
		case c == nil:
		case c["type"] == "text-delta":
			step.WriteString(c["delta"].(string))
		case c["type"] == "reset-step":
			step.Reset()
		case c["type"] == "finish-step":
			kept.WriteString(step.String())
			step.Reset()
		}
	}
	return kept.String() + step.String()
}
