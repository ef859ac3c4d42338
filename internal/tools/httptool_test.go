package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/redact"
)

// progressTool streams n progress events every gap in the given format, then a result.
func progressTool(format string, n int, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var args struct{ Q string }
		_ = json.NewDecoder(r.Body).Decode(&args)
		rc := http.NewResponseController(w)
		write := func(ev string) {
			if format == "sse" {
				fmt.Fprintf(w, "data: %s\n\n", ev)
			} else {
				fmt.Fprintf(w, "%s\n", ev)
			}
			rc.Flush()
		}
		w.Header().Set("Content-Type", map[string]string{"sse": "text/event-stream", "ndjson": "application/x-ndjson"}[format])
		for i := 1; i <= n; i++ {
			write(fmt.Sprintf(`{"kind":"progress","done":%d,"total":%d,"message":"row %d"}`, i, n, i))
			time.Sleep(gap)
		}
		write(fmt.Sprintf(`{"kind":"result","output":{"rows":%d,"q":%q}}`, n, args.Q))
	}
}

func httpSet(c *http.Client, timeout, liveness time.Duration) *Set {
	return New([]Spec{{Name: "lookup", HTTP: &HTTP{URL: "http://tool.test/lookup", Timeout: timeout, Liveness: liveness,
		Parameters: json.RawMessage(`{"type":"object"}`)}}}, Options{Client: c, RedactJSON: redact.Default().RedactJSON,
		RedactText: redact.Default().Redact})
}

// 100 updates 10 ms apart arrive as 10 progress events, the last one always (issue 12).
func TestProgressCoalesced(t *testing.T) {
	for _, format := range []string{"sse", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				set := httpSet(serve(t, progressTool(format, 100, 10*time.Millisecond)), time.Minute, 5*time.Second)
				defer set.Close()
				f, msgs, err := runCalls(t.Context(), set, []string{"lookup"}, toolCall("call_1", "lookup", `{"q":"all"}`))
				if err != nil {
					t.Fatal(err)
				}
				ps := f.of("data-tool-progress")
				if len(ps) != 10 {
					t.Fatalf("got %d progress events, want 10: %s", len(ps), f.types())
				}
				last := ps[9]["data"].(map[string]any)
				if ps[9]["id"] != "call_1" || last["done"] != 100.0 || last["total"] != 100.0 || last["tool"] != "lookup" || last["message"] != "row 100" {
					t.Errorf("got last progress %v, want call_1 at 100 of 100", ps[9])
				}
				out := f.of("tool-output-available")
				if len(out) != 1 || out[0]["providerExecuted"] != true || out[0]["dynamic"] != true {
					t.Fatalf("got outputs %v, want one, executed by the gateway", out)
				}
				if got, _ := json.Marshal(out[0]["output"]); string(got) != `{"q":"all","rows":100}` {
					t.Errorf("got output %s, want the tool's result", got)
				}
				if len(msgs) != 1 || msgs[0].ToolCallID != "call_1" || text(msgs[0]) != `{"rows":100,"q":"all"}` {
					t.Errorf("got tool messages %+v, want the result as the tool wrote it", msgs)
				}
			})
		})
	}
}

// Progress is small and redacted; a plain JSON answer is the result.
func TestProgressRedactedAndSmall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("é", 400)
		h := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"kind\":\"progress\",\"message\":\"key sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7 found\"}\n\n")
			fmt.Fprintf(w, "data: {\"kind\":\"progress\",\"message\":%q,\"extra\":\"dropped\"}\n\n", long)
			time.Sleep(time.Second)
			fmt.Fprintf(w, "data: {\"kind\":\"result\",\"output\":\"token sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7\"}\n\n")
		}
		set := httpSet(serve(t, http.HandlerFunc(h)), time.Minute, 0)
		defer set.Close()
		f, msgs, _ := runCalls(t.Context(), set, []string{"lookup"}, toolCall("c1", "lookup", `{}`))
		ps := f.of("data-tool-progress")
		if len(ps) != 1 {
			t.Fatalf("got %v, want the second progress only (the first superseded)", ps)
		}
		msg := ps[0]["data"].(map[string]any)["message"].(string)
		if len(msg) > maxMessage+len("…") || ps[0]["data"].(map[string]any)["extra"] != nil {
			t.Errorf("got a progress message of %d bytes and fields %v, want it cut and no extra field", len(msg), ps[0]["data"])
		}
		out := f.of("tool-output-available")[0]["output"].(string)
		if out != "token [REDACTED:openai_key]" {
			t.Errorf("got output %q, want it redacted for the client", out)
		}
		if text(msgs[0]) != "token sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7" {
			t.Errorf("got %q for the model, want the tool's output (the alias does not redact input)", text(msgs[0]))
		}
	})
}

func TestProgressRedacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			fmt.Fprintln(w, `{"kind":"progress","message":"key sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7 found"}`)
			fmt.Fprintln(w, `{"kind":"result","output":1}`)
		}
		set := httpSet(serve(t, http.HandlerFunc(h)), time.Minute, 0)
		defer set.Close()
		f, _, _ := runCalls(t.Context(), set, []string{"lookup"}, toolCall("c1", "lookup", `{}`))
		if ps := f.of("data-tool-progress"); len(ps) != 1 || ps[0]["data"].(map[string]any)["message"] != "key [REDACTED:openai_key] found" {
			t.Errorf("got %v, want the last progress, masked", ps)
		}
	})
}

// A failed tool is tool-output-error and an error result for the model; the next call runs.
func TestToolFailures(t *testing.T) {
	tests := []struct {
		name    string
		h       http.HandlerFunc
		timeout time.Duration
		live    time.Duration
		want    string // the error text, a prefix
		took    time.Duration
	}{
		{"http error", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"message":"index rebuilding"}}`)
		}, time.Minute, 0, "the tool answered HTTP 503: index rebuilding", 0},
		{"error event", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"kind\":\"progress\",\"done\":1}\n\ndata: {\"kind\":\"error\",\"message\":\"disk full\"}\n\n")
		}, time.Minute, 0, "disk full", 0},
		{"no result", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"kind":"progress","done":1}`+"\n")
		}, time.Minute, 0, "The tool failed: the tool's answer ended before its result", 0},
		{"not json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"rows":`)
		}, time.Minute, 0, "the tool's JSON answer is not valid JSON", 0},
		// A plain JSON tool is bounded by its timeout only: no liveness.
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(time.Hour):
			case <-r.Context().Done():
			}
		}, 2 * time.Second, time.Second, "The tool did not finish within 2s (its timeout) and was canceled.", 2 * time.Second},
		// A streaming tool that goes silent is canceled after its liveness.
		{"liveness", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"kind\":\"progress\",\"done\":1}\n\n")
			http.NewResponseController(w).Flush()
			time.Sleep(4 * time.Second)
			io.WriteString(w, ": still here\n\n") // any byte is a sign of life
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}, time.Minute, 5 * time.Second, "The tool went silent for 5s (its liveness limit) and was canceled.", 9 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mux := http.NewServeMux()
				mux.Handle("/lookup", tt.h)
				mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `"fine"`)
				})
				c := serve(t, mux)
				set := New([]Spec{
					{Name: "lookup", HTTP: &HTTP{URL: "http://tool.test/lookup", Timeout: tt.timeout, Liveness: tt.live}},
					{Name: "ok", HTTP: &HTTP{URL: "http://tool.test/ok", Timeout: time.Minute}},
				}, Options{Client: c})
				defer set.Close()
				start := time.Now()
				f, msgs, err := runCalls(t.Context(), set, []string{"lookup", "ok"}, toolCall("c1", "lookup", `{}`), toolCall("c2", "ok", `{}`))
				if err != nil {
					t.Fatalf("got %v, want a failed tool not to fail the run", err)
				}
				errs := f.of("tool-output-error")
				if len(errs) != 1 || errs[0]["toolCallId"] != "c1" || !strings.HasPrefix(errs[0]["errorText"].(string), tt.want) {
					t.Errorf("got errors %v, want c1's %q", errs, tt.want)
				}
				if len(msgs) != 2 || text(msgs[0]) != "Error: "+errs[0]["errorText"].(string) || text(msgs[1]) != "fine" {
					t.Errorf("got tool messages %+v, want the error for the model, then the next call's result", msgs)
				}
				if took := time.Since(start); tt.took > 0 && took != tt.took {
					t.Errorf("took %v, want %v", took, tt.took)
				}
			})
		})
	}
}

// A tool that cannot be reached says only that: hosts and paths stay in the log.
func TestUnreachable(t *testing.T) {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return nil, fmt.Errorf("dial tcp 10.1.2.3:443: connection refused")
	}}}
	set := New([]Spec{{Name: "lookup", HTTP: &HTTP{URL: "http://internal.example:8443/secret-path", Timeout: time.Minute}}}, Options{Client: c})
	defer set.Close()
	f, msgs, _ := runCalls(context.Background(), set, []string{"lookup"}, toolCall("c1", "lookup", `{}`))
	if e := f.of("tool-output-error"); len(e) != 1 || e[0]["errorText"] != "The tool could not be reached." || strings.Contains(text(msgs[0]), "internal") {
		t.Errorf("got %v and %q, want a bare error", e, text(msgs[0]))
	}
}
