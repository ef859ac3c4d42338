package runs

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/uistream"
)

func TestRunEnds(t *testing.T) {
	tests := []struct {
		name    string
		scripts []string
		restart bool
		want    string // squeezed chunk types
	}{
		{"text", []string{"text?len=40"}, false,
			"start,start-step,text-start,text-delta+,text-end,finish-step,message-metadata,finish,DONE"},
		{"client tool call", []string{"tools?calls=2&say=Checking."}, false,
			"start,start-step,text-start,text-delta,text-end,tool-input-start,tool-input-available,tool-input-start,tool-input-available,finish-step,message-metadata,finish,DONE"},
		{"reasoning", []string{"reason?think=20&len=10"}, false,
			"start,start-step,reasoning-start,reasoning-delta+,reasoning-end,text-start,text-delta+,text-end,finish-step,message-metadata,finish,DONE"},
		{"midstream failure", []string{"text?len=80&fail=cut&after=3", "text?len=20"}, false,
			"start,start-step,text-start,text-delta+,text-end,error,finish,DONE"},
		{"restart", []string{"text?len=80&fail=cut&after=3", "text?len=20&seed=2"}, true,
			"start,start-step,text-start,text-delta+,reset-step,text-start,text-delta+,text-end,finish-step,message-metadata,finish,DONE"},
		{"restart with nothing left", []string{"text?len=80&fail=cut&after=3"}, true,
			"start,start-step,text-start,text-delta+,text-end,error,finish,DONE"},
		{"chain fails before commit", []string{"text?fail=500"}, false, "error,finish,DONE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := manager(t, NewMemory(), Options{})
			run, rd, err := m.Start(context.Background(), spec("c1", chain(t, tt.scripts...), tt.restart))
			if err != nil {
				t.Fatal(err)
			}
			frames, err := drain(t, rd)
			if err != nil {
				t.Fatal(err)
			}
			if got := squeeze(types(t, frames)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if tt.name == "chain fails before commit" && llm.KindOf(run.Early()) != llm.Unavailable {
				t.Errorf("got early error %v, want the chain's", run.Early())
			}
			for i, f := range frames {
				if want := "id: " + run.ID() + "-" + strconv.Itoa(i+1) + "\n"; !strings.HasPrefix(f, want) {
					t.Errorf("frame %d: got %q, want it to start with %q", i, f, want)
				}
			}
		})
	}
}

// A restart keeps only the second attempt's text; the first attempt's deltas were sent.
func TestRestartText(t *testing.T) {
	m := manager(t, NewMemory(), Options{})
	_, rd, err := m.Start(context.Background(), spec("c1", chain(t, "text?len=80&fail=cut&after=3&say=FIRST&at=0", "text?len=0&say=Second+answer."), true))
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := drain(t, rd)
	all := strings.Join(frames, "")
	if !strings.Contains(all, "FIRST") || strings.Count(all, `"start-step"`) != 1 || strings.Contains(all, `"error"`) {
		t.Errorf("got %s, want the first attempt's text, one start-step and no error", all)
	}
	if got := text(t, frames); got != "Second answer." {
		t.Errorf("got text %q, want only the second attempt's", got)
	}
}

// v5 clients get the restart as flagged ends and a transient data part, never reset-step.
func TestRestartV5(t *testing.T) {
	m := manager(t, NewMemory(), Options{})
	sp := spec("c1", chain(t, "text?len=80&fail=cut&after=3", "text?len=20"), true)
	sp.Version = uistream.V5
	_, rd, err := m.Start(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := drain(t, rd)
	all := strings.Join(frames, "")
	if strings.Contains(all, "reset-step") || !strings.Contains(all, `"providerMetadata":{"sluice":{"restarted":true}}`) ||
		!strings.Contains(all, `"type":"data-restart"`) || strings.Contains(all, "finishReason") {
		t.Errorf("got %s, want a v5 restart", all)
	}
}

// fakeTools owns "get_weather" and answers every call.
type fakeTools struct{ calls int }

func (f *fakeTools) Owns(name string) bool { return name == "get_weather" }

func (f *fakeTools) Run(_ context.Context, calls []llm.ToolCall, enc *uistream.Encoder) ([]llm.Message, error) {
	var out []llm.Message
	for _, c := range calls {
		f.calls++
		out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Parts: []llm.Part{{Type: llm.PartText, Text: "18C"}}})
	}
	return out, nil
}

// With server tools, rounds go on on the same target until max_rounds, which ends the run
// with a warning and no error.
func TestRoundsCapped(t *testing.T) {
	m := manager(t, NewMemory(), Options{MaxRounds: 3})
	sp := spec("c1", chain(t, "tools?calls=1", "text"), false)
	ft := &fakeTools{}
	sp.Tools = ft
	run, rd, err := m.Start(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := drain(t, rd)
	got := types(t, frames)
	if strings.Count(got, "start-step") != 3 || !strings.Contains(got, "data-warning,finish,DONE") || strings.Contains(got, "error") {
		t.Errorf("got %s, want 3 rounds then the warning", got)
	}
	if target, attempts := run.Served(); target != "sim/tools?calls=1" || attempts != 1 || ft.calls != 3 {
		t.Errorf("got target %s, %d attempts, %d tool calls; want the first target, 1 and 3", target, attempts, ft.calls)
	}
	if u := run.Usage(); u.TotalTokens == 0 {
		t.Errorf("got no usage, want three rounds'")
	}
	<-run.Ended()
	// Every upstream call is a call for the request's spans and metrics, the later rounds'
	// included (Served counts only the first round's).
	calls, last := run.Calls()
	if len(calls) != 3 || last == nil || len(last.Choices) == 0 {
		t.Fatalf("got %d calls, last response %v; want 3 and the third round's", len(calls), last)
	}
	for _, c := range calls {
		if c.Target != "sim/tools?calls=1" || !c.Committed {
			t.Errorf("got call %+v, want a committed call of the first target", c)
		}
	}
}

func TestOtherKey(t *testing.T) {
	m := manager(t, NewMemory(), Options{})
	_, rd, err := m.Start(context.Background(), spec("c1", chain(t, "text?len=200&delay=20ms"), false))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := m.Open(context.Background(), "c1", "k2", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("resume with another key: got %v, want ErrNotFound", err)
	}
	if _, err := m.Stop(context.Background(), "c1", "k2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("stop with another key: got %v, want ErrNotFound", err)
	}
	sp := spec("c1", chain(t, "text"), false)
	sp.Key = "k2"
	if _, _, err := m.Start(context.Background(), sp); !errors.Is(err, ErrBusy) {
		t.Errorf("a run on another key's active chat: got %v, want ErrBusy", err)
	}
	if _, err := m.Open(context.Background(), "nope", "k1", ""); !errors.Is(err, ErrNoRun) {
		t.Errorf("resume of an unknown chat: got %v, want ErrNoRun", err)
	}
}

// A run's error chunk says what any client of the gateway is told (llm.Public and
// llm.Midstream, one wording for every wire): a provider refusing the gateway's credentials
// says so, without the provider's message (which may quote the key).
func TestRunErrorWording(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"text?fail=401", "all targets of 'a' failed: sim/text?fail=401: 401 the provider refused the gateway's credentials"},
		{"text?len=80&fail=cut&after=3", "sim/text?len=80&fail=cut&after=3 failed after the answer started"},
	} {
		m := manager(t, NewMemory(), Options{})
		_, rd, err := m.Start(context.Background(), spec("c1", chain(t, c.script), false))
		if err != nil {
			t.Fatal(err)
		}
		frames, err := drain(t, rd)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, f := range frames {
			if ch := chunk(t, f); ch != nil && ch["type"] == "error" {
				got = ch["errorText"].(string)
			}
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got error %q, want it to start with %q", c.script, got, c.want)
		}
	}
}
