package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// The embedded default's demo: the model calls demo_progress (a simulated tool: ten steps of
// progress), then answers with its result, all in one run.
func TestDemoToolAlias(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.Logs.URL = "" // no store in the bubble: this test is about the tool
		s, err := gw.New(cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec := &recorder{h: http.Header{}}
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/ui/chat", strings.NewReader(uiBody("demo-1", "demo", "Run the demo."))))
		frames := sseFrames(t, &rec.body, -1)
		types := strings.Join(chunkTypes(t, frames), ",")
		if n := strings.Count(types, "data-tool-progress"); n != 10 || !strings.Contains(types, "tool-output-available") {
			t.Fatalf("got %s, want ten progress events and the tool's output", types)
		}
		if got := uiText(t, frames); got != "Let me run the demo tool.The tool answered: Finished 10 of 10 steps." {
			t.Errorf("got text %q, want the first round's words, then the second's with the tool's result", got)
		}
		var last struct {
			Data struct{ Done, Total float64 }
		}
		for _, f := range frames {
			if strings.Contains(f, `"data-tool-progress"`) {
				_ = json.Unmarshal([]byte(frameData(f)), &last)
			}
		}
		if last.Data.Done != 10 || last.Data.Total != 10 {
			t.Errorf("got last progress %+v, want 10 of 10", last.Data)
		}
	})
}

// An HTTP tool in a real config: offered to the model with its schema, run by the gateway,
// measured in telemetry and the access line.
func TestHTTPToolWired(t *testing.T) {
	mock := mockllm.New(mockllm.Options{})
	up := httptest.NewServer(mock)
	defer up.Close()
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tool-secret" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"kind":"progress","done":1,"total":2}`+"\n"+`{"kind":"result","output":{"rows":2}}`+"\n")
	}))
	defer tool.Close()
	const script = "tools?name=lookup&args={}&then=echo"
	cfg, err := config.ParseWith([]byte(fmt.Sprintf(`
providers:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  tooled: {targets: ["up/%s"], tools: [lookup]}
tools:
  lookup:
    http:
      url: "%s/lookup"
      headers: {Authorization: "Bearer ${TOOL_KEY}"}
      description: Looks rows up.
      parameters: {type: object, properties: {q: {type: string}}}
`, up.URL, script, tool.URL)), "t.yaml", func(k string) (string, bool) { return "tool-secret", k == "TOOL_KEY" })
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	s, err := gw.New(cfg, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := recordTelemetry(s)
	gw := httptest.NewServer(s)
	defer gw.Close()
	resp := uiDo(t, timeout(t, 10*time.Second), "POST", gw.URL+"/v1/ui/chat", "", uiBody("wired-1", "tooled", "hi"))
	frames := sseFrames(t, resp.Body, -1)
	resp.Body.Close()
	if got := uiText(t, frames); got != `The tool answered: {"rows":2}` {
		t.Errorf("got text %q, want the tool's result in the second round (types %v)", got, chunkTypes(t, frames))
	}
	last := string(mock.LastRequest(script)) // the second round's request carries the tool too
	if !strings.Contains(last, `"name":"lookup","description":"Looks rows up.","parameters":{"properties":{"q":{"type":"string"}},"type":"object"}`) {
		t.Errorf("got upstream request %s, want the tool offered with its schema", last)
	}
	if h := m.histogram(t, "sluice.tool.duration"); attr(h.Attributes.ToSlice(), "sluice.tool") != "lookup" || attr(h.Attributes.ToSlice(), "sluice.outcome") != "ok" {
		t.Errorf("got %v, want the invocation measured with its tool and outcome", h.Attributes)
	}
	found := false
	for _, sp := range m.spans.Ended() {
		found = found || sp.Name() == "execute_tool lookup"
	}
	if !found {
		t.Error("got no execute_tool span")
	}
	for end := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "path=/v1/ui/chat") && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // the access line is written once the handler returns
	}
	if l := log.String(); !strings.Contains(l, "tools=1 tool_errors=0") || strings.Contains(l, "tool-secret") {
		t.Errorf("got log %s, want the invocation counted and no secret", l)
	}
	// A client may not declare a tool of the gateway's.
	bad := `{"id":"wired-2","model":"tooled","tools":[{"type":"function","function":{"name":"lookup"}}],"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"x"}]}]}`
	r2 := uiDo(t, timeout(t, 5*time.Second), "POST", gw.URL+"/v1/ui/chat", "", bad)
	body, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 400 || !strings.Contains(string(body), "server-side tool") {
		t.Errorf("got %d %s, want a 400", r2.StatusCode, body)
	}
}
