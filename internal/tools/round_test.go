package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/openai"
	"github.com/sluice-gw/sluice/internal/provider/sim"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// The round loop with the gateway's tools (runs, through its Tools seam), over the mock's
// scripts in process.

// lookupTool streams 5 progress events 100 ms apart then its result; hits counts its calls.
func lookupTool(hits *int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		*hits++
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(w, "data: {\"kind\":\"progress\",\"done\":%d,\"total\":5}\n\n", i)
			rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		io.WriteString(w, "data: {\"kind\":\"result\",\"output\":\"5 rows\"}\n\n")
	}
}

// startRun starts a run of script with the lookup tool offered, and returns its frames once
// it ended (stop, if set, is called at the run's first progress event).
func startRun(t *testing.T, script string, maxRounds int, hits *int, stop bool) []map[string]any {
	p, err := sim.New("sim", "")
	if err != nil {
		t.Fatal(err)
	}
	return startRunOn(t, p, nil, script, maxRounds, hits, stop)
}

// startRunOn is startRun on provider p, the request carrying extra fields.
func startRunOn(t *testing.T, p fallback.Provider, extra []llm.Field, script string, maxRounds int, hits *int, stop bool) []map[string]any {
	set := New([]Spec{{Name: "lookup", HTTP: &HTTP{URL: "http://tool.test/", Timeout: time.Minute, Liveness: 5 * time.Second}}},
		Options{Client: serve(t, lookupTool(hits))})
	defer set.Close()
	m := runs.NewManager(runs.Options{MaxRounds: maxRounds})
	defer m.Close()
	ch := &fallback.Chain{Alias: "a", CommitOnReasoning: true, Targets: []fallback.Target{{Name: "sim/" + script, Model: script, Provider: p}}}
	offer := set.Offer(t.Context(), []string{"lookup"}, false)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}, Tools: offer.Tools(), Extra: extra}
	req.KeepReasoning = true // as the server sets it for a run with tools
	_, rd, err := m.Start(t.Context(), runs.Spec{Chat: "c1", Version: uistream.V7, Model: "a", Request: req, Chain: ch.Start(req), Tools: offer})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []map[string]any
	for {
		b, err := rd.Next(t.Context())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		data := strings.TrimSuffix(s[strings.Index(s, "data: ")+6:], "\n\n")
		var c map[string]any
		_ = json.Unmarshal([]byte(data), &c)
		out = append(out, c)
		if stop && c != nil && c["type"] == "data-tool-progress" {
			stop = false
			if _, err := m.Stop(t.Context(), "c1", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// squeezed lists the chunk types, runs of one type collapsed ("a,b+,c").
func squeezed(cs []map[string]any) string {
	var out []string
	for _, c := range cs {
		typ := "DONE"
		if c != nil {
			typ = c["type"].(string)
		}
		if n := len(out); n > 0 && strings.TrimSuffix(out[n-1], "+") == typ {
			out[n-1] = typ + "+"
			continue
		}
		out = append(out, typ)
	}
	return strings.Join(out, ",")
}

func textOf(cs []map[string]any) string {
	var b strings.Builder
	for _, c := range cs {
		if c != nil && c["type"] == "text-delta" {
			b.WriteString(c["delta"].(string))
		}
	}
	return b.String()
}

// A round whose calls are all the gateway's: the tool runs inside the step, its output is
// fed to the model, and the next round on the same target answers with it.
func TestRoundLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hits := 0
		cs := startRun(t, "tools?name=lookup&then=echo", 0, &hits, false)
		want := "start,start-step,tool-input-start,tool-input-available,data-tool-progress+,tool-output-available,finish-step,message-metadata," +
			"start-step,text-start,text-delta+,text-end,finish-step,message-metadata,finish,DONE"
		if got := squeezed(cs); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		if hits != 1 || textOf(cs) != "The tool answered: 5 rows" {
			t.Errorf("got %d tool calls and text %q, want the tool's result in the next round", hits, textOf(cs))
		}
		for _, c := range cs {
			if c != nil && strings.HasPrefix(c["type"].(string), "tool-") && (c["providerExecuted"] != true || c["dynamic"] != true) {
				t.Errorf("got %v, want the gateway's call flagged providerExecuted and dynamic", c)
			}
		}
		if last := cs[len(cs)-2]; last["finishReason"] != "stop" {
			t.Errorf("got %v, want finish stop", last)
		}
	})
}

// A round with the gateway's call and the client's: the gateway runs its own, sends its
// output, and ends the run with finish (tool-calls) for the client to run the rest.
func TestMixedRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hits := 0
		cs := startRun(t, "tools?calls=2&name=lookup,get_weather&then=echo", 0, &hits, false)
		want := "start,start-step,tool-input-start,tool-input-available,tool-input-start,tool-input-available,data-tool-progress+," +
			"tool-output-available,finish-step,message-metadata,finish,DONE"
		if got := squeezed(cs); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		if cs[4]["toolName"] != "get_weather" || cs[4]["providerExecuted"] != nil || hits != 1 {
			t.Errorf("got %v, %d runs; want the client's call unflagged and the gateway's run once", cs[4], hits)
		}
		if fin := cs[len(cs)-2]; fin["finishReason"] != "tool-calls" {
			t.Errorf("got %v, want finish tool-calls", fin)
		}
	})
}

// A model that always calls a tool is stopped at max_rounds with a transient warning, not an
// error.
func TestRoundCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hits := 0
		cs := startRun(t, "tools?name=lookup", 3, &hits, false)
		got := squeezed(cs)
		if strings.Count(got, "start-step") != 3 || hits != 3 || strings.Contains(got, "error") || !strings.HasSuffix(got, "data-warning,finish,DONE") {
			t.Fatalf("got %s with %d tool runs, want 3 rounds, 3 runs, then the warning", got, hits)
		}
		if w := cs[len(cs)-3]; w["transient"] != true || w["data"].(map[string]any)["code"] != "max_rounds" {
			t.Errorf("got %v, want a transient max_rounds warning", w)
		}
	})
}

// Stop during a tool: the tool's request is canceled, its part gets an error, the run aborts.
func TestStopRunDuringTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hits := 0
		cs := startRun(t, "tools?name=lookup&then=echo", 0, &hits, true)
		got := strings.ReplaceAll(squeezed(cs), "+", "")
		if !strings.HasSuffix(got, "data-tool-progress,tool-output-error,abort,DONE") || strings.Contains(got, "tool-output-available") {
			t.Errorf("got %s, want the tool's error then abort", got)
		}
	})
}

// A call of the gateway's whose arguments are not JSON (cut by a token limit) does not run:
// the client got tool-input-error, the model gets an error result and goes on.
func TestBrokenArguments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const script = "tools?name=lookup&max=4&then=echo"
		mock := mockllm.New(mockllm.Options{})
		p := openai.New(openai.Config{Name: "m", BaseURL: "http://mock.test/v1", APIKey: "k", HTTPClient: &http.Client{Transport: mock.Transport()}})
		hits := 0
		cs := startRunOn(t, p, nil, script, 0, &hits, false)
		got := squeezed(cs)
		if hits != 0 || !strings.Contains(got, "tool-input-start,tool-input-error,finish-step") || strings.Contains(got, "tool-output") {
			t.Errorf("got %s with %d runs, want the input error and no run", got, hits)
		}
		if req := string(mock.LastRequest(script)); !strings.Contains(req, `"role":"tool","content":"Error: the tool's arguments are not valid JSON."`) {
			t.Errorf("got the second round's request %s, want the model told", req)
		}
	})
}
