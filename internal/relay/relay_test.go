package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redact"
)

// script is an llm.Stream that yields its events, then err (io.EOF when nil).
type script struct {
	evs []llm.Event
	err error
}

func (s *script) Recv() (llm.Event, error) {
	if len(s.evs) == 0 {
		if s.err != nil {
			return llm.Event{}, s.err
		}
		return llm.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func (s *script) Close() error { return nil }

// record is a sink that keeps copies of what it got.
type record struct {
	evs []llm.Event
	err error
}

func (r *record) Event(ev *llm.Event) error {
	r.evs = append(r.evs, *ev)
	return r.err
}

func (r *record) texts(t llm.EventType, choice int) []string {
	var out []string
	for _, ev := range r.evs {
		if ev.Type == t && ev.Choice == choice {
			out = append(out, ev.Text)
		}
	}
	return out
}

func text(choice int, s string) llm.Event {
	return llm.Event{Type: llm.EvText, Choice: choice, Text: s}
}

func redacting() Options {
	rules := redact.Default()
	return Options{NewWindow: func() Window { return rules.NewWindow() }, RedactJSON: rules.RedactJSON}
}

func TestToolCallsMergedAndReleasedWhole(t *testing.T) {
	s := &script{evs: []llm.Event{
		{Type: llm.EvStart, ID: "up-1", Model: "m"},
		text(0, "Let me check. "),
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 0, ID: "call_a", Name: "get_weather", Args: `{"ci`}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 1, ID: "call_b", Name: "get_time", Args: ``}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 0, Args: `ty": "Pa`}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 1, Args: `{"tz":"UTC"}`}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 0, Args: `ris"}`}},
		{Type: llm.EvDone, Finish: "tool_calls"},
		{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12}},
	}}
	sink := &record{}
	resp, err := Run(context.Background(), s, sink, redacting())
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, ev := range sink.evs {
		order = append(order, ev.Type.String())
	}
	if got, want := strings.Join(order, ","), "start,text,tool_call,tool_call,done,usage"; got != want {
		t.Errorf("got sink order %s, want %s", got, want)
	}
	calls := resp.Choices[0].ToolCalls
	if len(calls) != 2 || calls[0].Arguments != `{"city": "Paris"}` || calls[1].Arguments != `{"tz":"UTC"}` ||
		calls[0].ID != "call_a" || calls[1].Name != "get_time" {
		t.Errorf("got calls %+v, want both merged whole", calls)
	}
	if resp.Choices[0].Text != "Let me check. " || resp.Choices[0].Finish != "tool_calls" || resp.ID != "up-1" {
		t.Errorf("got %+v, want text, finish and id", resp.Choices[0])
	}
	if resp.Usage.TotalTokens != 12 || resp.Usage.Estimated {
		t.Errorf("got usage %+v, want the reported one", resp.Usage)
	}
}

func TestRedactionExample4(t *testing.T) {
	s := &script{evs: []llm.Event{text(0, "The key is sk-pr"), text(0, "oj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"), text(0, " ok"), {Type: llm.EvDone, Finish: "stop"}}}
	sink := &record{}
	resp, err := Run(context.Background(), s, sink, redacting())
	if err != nil {
		t.Fatal(err)
	}
	got := sink.texts(llm.EvText, 0)
	want := []string{"The key is ", "[REDACTED:openai_key] ", "ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got releases %q, want %q", got, want)
	}
	if resp.Choices[0].Text != strings.Join(want, "") || resp.Redactions["openai_key"] != 1 {
		t.Errorf("got text %q redactions %v, want the masked text and one openai_key", resp.Choices[0].Text, resp.Redactions)
	}
	if !resp.Usage.Estimated || resp.Usage.CompletionTokens == 0 {
		t.Errorf("got usage %+v, want an estimate when none was reported", resp.Usage)
	}
}

func TestToolArgumentsRedacted(t *testing.T) {
	key := "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	s := &script{evs: []llm.Event{
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{ID: "c", Name: "f", Args: `{"key":"` + key[:10]}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Args: key[10:] + `"}`}},
		{Type: llm.EvDone, Finish: "tool_calls"},
	}}
	sink := &record{}
	resp, err := Run(context.Background(), s, sink, redacting())
	if err != nil {
		t.Fatal(err)
	}
	args := resp.Choices[0].ToolCalls[0].Arguments
	if strings.Contains(args, "Xq7Rt2") || args != `{"key":"[REDACTED:openai_key]"}` {
		t.Errorf("got arguments %s, want the key masked inside valid JSON", args)
	}
	for _, ev := range sink.evs {
		if strings.Contains(ev.Tool.Args, "Xq7Rt2") {
			t.Errorf("the sink saw the key: %+v", ev)
		}
	}
}

func TestChoicesHaveTheirOwnWindows(t *testing.T) {
	s := &script{evs: []llm.Event{text(0, "alpha be"), text(1, "gamma de"), text(0, "ta "), text(1, "lta "),
		{Type: llm.EvDone, Choice: 1, Finish: "stop"}, {Type: llm.EvDone, Choice: 0, Finish: "length"}}}
	resp, err := Run(context.Background(), s, &record{}, redacting())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Text != "alpha beta " || resp.Choices[1].Text != "gamma delta " ||
		resp.Choices[0].Finish != "length" || resp.Choices[1].Finish != "stop" {
		t.Errorf("got %+v, want each choice whole", resp.Choices)
	}
}

func TestFailureKeepsWhatWasReleased(t *testing.T) {
	boom := &llm.Error{Kind: llm.Unavailable, Message: "boom"}
	s := &script{evs: []llm.Event{text(0, "Hello there")}, err: boom}
	resp, err := Run(context.Background(), s, &record{}, Options{})
	if !errors.Is(err, boom) || resp.Choices[0].Text != "Hello there" {
		t.Errorf("got %v %q, want the error and the text so far", err, resp.Choices[0].Text)
	}
}

func TestSinkErrorAfterClientLeft(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &script{evs: []llm.Event{text(0, "x"), {Type: llm.EvDone}}}
	_, err := Run(ctx, s, &record{err: errors.New("broken pipe")}, Options{})
	if llm.KindOf(err) != llm.Canceled {
		t.Errorf("got %v (kind %v), want canceled", err, llm.KindOf(err))
	}
}

func TestThinkFilterAnySplit(t *testing.T) {
	whole := "<think>plan: add 2 and 2</think>The answer is 4 <thin"
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 500; i++ {
		var evs []llm.Event
		for rest := whole; rest != ""; {
			n := 1 + rng.Intn(len(rest))
			evs = append(evs, text(0, rest[:n]))
			rest = rest[n:]
		}
		evs = append(evs, llm.Event{Type: llm.EvDone, Finish: "stop"})
		resp, err := Run(context.Background(), &script{evs: evs}, &record{}, Options{ThinkFilter: true})
		if err != nil {
			t.Fatal(err)
		}
		if c := resp.Choices[0]; c.Text != "The answer is 4 <thin" || c.Reasoning != "plan: add 2 and 2" {
			t.Fatalf("split %d: got text %q reasoning %q", i, c.Text, c.Reasoning)
		}
	}
}

func FuzzThinkFilter(f *testing.F) {
	f.Add("a<think>b</think>c", uint8(3))
	f.Add("<thi<think>nk></think></think>", uint8(1))
	f.Fuzz(func(t *testing.T, s string, step uint8) {
		n := int(step)%7 + 1
		var a, b thinkFilter
		wt, wr := a.split(s)
		ft, fr := a.flush()
		wt, wr = wt+ft, wr+fr
		var gt, gr strings.Builder
		for i := 0; i < len(s); i += n {
			x, y := b.split(s[i:min(i+n, len(s))])
			gt.WriteString(x)
			gr.WriteString(y)
		}
		x, y := b.flush()
		gt.WriteString(x)
		gr.WriteString(y)
		if gt.String() != wt || gr.String() != wr {
			t.Fatalf("%q in pieces of %d: got %q/%q, want %q/%q", s, n, gt.String(), gr.String(), wt, wr)
		}
	})
}

// BenchmarkRun relays answers of growing size in 8-byte text events through the default
// redaction rules: time should grow linearly, and allocations per event stay constant.
func BenchmarkRun(b *testing.B) {
	words := strings.Fields("the quick brown fox jumps over the lazy dog while streams flow through the gateway")
	for _, size := range []int{10 << 10, 100 << 10, 1 << 20} {
		var sb strings.Builder
		for i := 0; sb.Len() < size; i++ {
			sb.WriteString(words[i%len(words)] + " ")
		}
		body := sb.String()[:size]
		evs := make([]llm.Event, 0, size/8+1)
		for i := 0; i < len(body); i += 8 {
			evs = append(evs, text(0, body[i:min(i+8, len(body))]))
		}
		evs = append(evs, llm.Event{Type: llm.EvDone, Finish: "stop"})
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			o := redacting()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), &script{evs: evs}, discard{}, o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(evs)), "events/op")
		})
	}
}

type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

func TestCoalesce(t *testing.T) {
	words := strings.Fields("one two three four five six seven eight nine ten")
	evs := []llm.Event{}
	for _, w := range words {
		evs = append(evs, text(0, w+" "))
	}
	evs = append(evs, llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{ID: "c", Name: "f", Args: "{}"}}, llm.Event{Type: llm.EvDone, Finish: "stop"})
	tests := []struct {
		name string
		c    Coalesce
		step time.Duration // the fake clock advances this much per read
		want []string
	}{
		{"off", Coalesce{}, 0, []string{"one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight ", "nine ", "ten "}},
		{"every 3 events", Coalesce{Events: 3}, 0, []string{"one ", "two three four ", "five six seven ", "eight nine ten "}},
		{"every 4 events, end flushed", Coalesce{Events: 4}, 0, []string{"one ", "two three four five ", "six seven eight nine ", "ten "}},
		{"interval", Coalesce{Interval: 25 * time.Millisecond}, 10 * time.Millisecond, []string{"one ", "two three four ", "five six seven ", "eight nine ten "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			o := Options{Coalesce: tt.c, Now: func() time.Time { now = now.Add(tt.step); return now }}
			sink := &record{}
			resp, err := Run(context.Background(), &script{evs: append([]llm.Event(nil), evs...)}, sink, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := sink.texts(llm.EvText, 0); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			last := sink.evs[len(sink.evs)-1]
			if last.Type != llm.EvDone || sink.evs[len(sink.evs)-2].Type != llm.EvToolCall {
				t.Errorf("got %v last, want the held text before the tool call and the finish", sink.evs[len(sink.evs)-3:])
			}
			if resp.Choices[0].Text != strings.Join(words, " ")+" " {
				t.Errorf("got %q, want the whole text", resp.Choices[0].Text)
			}
		})
	}
}

func TestCoalescedTextGoesOutBeforeAnError(t *testing.T) {
	boom := &llm.Error{Kind: llm.Unavailable}
	sink := &record{}
	_, err := Run(context.Background(), &script{evs: []llm.Event{text(0, "a "), text(0, "b "), text(0, "c ")}, err: boom}, sink, Options{Coalesce: Coalesce{Events: 10}})
	if !errors.Is(err, boom) || strings.Join(sink.texts(llm.EvText, 0), "") != "a b c " {
		t.Errorf("got %v %q, want the error after all released text", err, sink.texts(llm.EvText, 0))
	}
}

// TestSignatureAfterItsReasoning checks that the opaque end of a reasoning block (an
// Anthropic signature) reaches the sink after all of the block's text, though the window
// holds the last word back: a sink that rebuilds thinking blocks needs text, then signature.
func TestSignatureAfterItsReasoning(t *testing.T) {
	s := &script{evs: []llm.Event{
		{Type: llm.EvReasoning, Text: "Consider the accidents"},
		{Type: llm.EvReasoning, Encrypted: "sig-1", ID: "rs_1"},
		text(0, "Answer."),
		{Type: llm.EvDone, Finish: "stop"},
	}}
	var r record
	resp, err := Run(t.Context(), s, &r, redacting())
	if err != nil {
		t.Fatal(err)
	}
	if o := resp.Choices[0].Opaque; len(o) != 1 || o[0] != (llm.Reasoning{ID: "rs_1", Text: "Consider the accidents", Encrypted: "sig-1"}) {
		t.Errorf("response keeps opaque reasoning %+v, want the signature with its block's text and id", o)
	}
	var order []string
	for _, ev := range r.evs {
		switch {
		case ev.Encrypted != "":
			order = append(order, "sig")
		case ev.Type == llm.EvReasoning:
			order = append(order, "reasoning:"+ev.Text)
		case ev.Type == llm.EvText:
			order = append(order, "text:"+ev.Text)
		}
	}
	got := strings.Join(order, "|")
	if !strings.HasSuffix(strings.Split(got, "|sig")[0], "accidents") || !strings.Contains(got, "|sig|text:") {
		t.Errorf("order %q: want the whole reasoning, then the signature, then the text", got)
	}
}
