package server_test

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestRunHeldRoundNeverReachesTheClient: an output guardrail in mode hold keeps a frontend
// run's round from the client until its verdict; a refused round's text is never sent, the
// run ends with the refusal. In mode stream the same text is streamed, then refused: the
// case the hold mode exists to prevent.
func TestRunHeldRoundNeverReachesTheClient(t *testing.T) {
	url := serveGate(t, `providers: {sim: {kind: sim}}
guardrails:
  held:   {stage: output, kind: terms, terms: [condor]}
  stream: {stage: output, kind: terms, terms: [condor], mode: stream}
models:
  held:     {targets: ["sim/text?len=40&say=the+condor+flies"], guardrails: [held]}
  streamed: {targets: ["sim/text?len=40&say=the+condor+flies"], guardrails: [stream]}
  fine:     {targets: ["sim/text?len=40"], guardrails: [held]}
`, nil, time.Hour, nil)
	run := func(model string) string {
		resp := uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", "", uiBody("hold-"+model, model, "hi"))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b)
	}
	held := run("held")
	if strings.Contains(held, "condor") || strings.Contains(held, `"type":"text-delta"`) {
		t.Errorf("a held, refused round reached the client:\n%s", held)
	}
	if !strings.Contains(held, `"type":"error"`) || !strings.Contains(held, "held") {
		t.Errorf("the refused run's end: %s\nwant the error naming the guardrail", held)
	}
	if streamed := run("streamed"); !strings.Contains(streamed, "condor") || !strings.Contains(streamed, `"type":"error"`) {
		t.Errorf("mode stream: want the text streamed, then the refusal:\n%s", streamed)
	}
	if fine := run("fine"); !strings.Contains(fine, `"type":"text-delta"`) || strings.Contains(fine, `"type":"error"`) {
		t.Errorf("a held round that passes: want its text replayed and no error:\n%s", fine)
	}
}
