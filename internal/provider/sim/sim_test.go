package sim

import (
	"io"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEveryAPI runs the same scripts over each wire: the text, the tool calls and the
// failure modes come out the same through each adapter.
func TestEveryAPI(t *testing.T) {
	for _, api := range APIs {
		t.Run(api, func(t *testing.T) {
			p, err := New("sim", api)
			if err != nil {
				t.Fatal(err)
			}
			req := func(model string) *llm.Request {
				return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser,
					Parts: []llm.Part{{Type: llm.PartText, Text: "ping pong"}}, Plain: true}}}
			}
			text, calls, finish, err := run(t, p, req("echo"))
			if err != nil || text != "ping pong" || finish != "stop" || calls != 0 {
				t.Errorf("echo: text %q calls %d finish %q err %v", text, calls, finish, err)
			}
			_, calls, finish, err = run(t, p, req("tools?calls=2"))
			if err != nil || calls != 2 || finish != "tool_calls" {
				t.Errorf("tools: calls %d finish %q err %v", calls, finish, err)
			}
			_, _, _, err = run(t, p, req("text?fail=500"))
			if llm.KindOf(err) != llm.Unavailable {
				t.Errorf("fail=500: %v, want Unavailable", err)
			}
			_, _, _, err = run(t, p, req("text?len=40&fail=cut&after=5"))
			if llm.KindOf(err) != llm.Truncated {
				t.Errorf("fail=cut: %v, want Truncated", err)
			}
		})
	}
	if _, err := New("sim", "grpc"); err == nil || !strings.Contains(err.Error(), "grpc") {
		t.Errorf("unknown api: %v", err)
	}
}

func run(t *testing.T, p llm.Provider, req *llm.Request) (text string, calls int, finish string, _ error) {
	t.Helper()
	err := drain(t, p, req, func(ev llm.Event) {
		switch ev.Type {
		case llm.EvText:
			text += ev.Text
		case llm.EvToolCall:
			if ev.Tool.ID != "" {
				calls++
			}
		case llm.EvDone:
			finish = ev.Finish
		}
	})
	return text, calls, finish, err
}

// drain streams req from p and hands each event to f, up to the stream's end (nil) or error.
func drain(t *testing.T, p llm.Provider, req *llm.Request, f func(llm.Event)) error {
	t.Helper()
	s, err := p.Stream(t.Context(), req)
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		f(ev)
	}
}
