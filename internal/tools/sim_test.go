package tools

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func TestSim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := New([]Spec{{Name: "demo", Sim: &Sim{Steps: 3, Interval: 300 * time.Millisecond}},
			{Name: "broken", Sim: &Sim{Steps: 1, Interval: time.Second, Fail: true}}}, Options{})
		defer set.Close()
		start := time.Now()
		f, msgs, err := runCalls(t.Context(), set, []string{"demo", "broken"}, toolCall("c1", "demo", ""), toolCall("c2", "broken", "{}"))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.types(); got != "data-tool-progress,data-tool-progress,data-tool-progress,tool-output-available,data-tool-progress,tool-output-error" {
			t.Errorf("got %s, want each step of demo, its output, then broken's step and error", got)
		}
		if text(msgs[0]) != "Finished 3 of 3 steps." || text(msgs[1]) != "Error: The simulated tool failed after 1 steps (sim.fail: true)." {
			t.Errorf("got %q and %q", text(msgs[0]), text(msgs[1]))
		}
		if took := time.Since(start); took != 1900*time.Millisecond {
			t.Errorf("took %v, want 3 steps of 300ms and one of 1s", took)
		}
	})
}

// Stopping the run cancels the tool in flight (its HTTP request), writes its error, and the
// calls after it do not run.
func TestStopDuringTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		canceled, ran := make(chan struct{}), 0
		mux := http.NewServeMux()
		mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {\"kind\":\"progress\",\"done\":1,\"total\":9}\n\n"))
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			close(canceled)
		})
		mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) { ran++ })
		c := serve(t, mux)
		set := New([]Spec{{Name: "slow", HTTP: &HTTP{URL: "http://t/slow", Timeout: time.Hour, Liveness: time.Hour}},
			{Name: "next", HTTP: &HTTP{URL: "http://t/next", Timeout: time.Hour}}}, Options{Client: c})
		defer set.Close()
		ctx, stop := context.WithCancelCause(t.Context())
		stopped := errors.New("run stopped")
		time.AfterFunc(5*time.Second, func() { stop(stopped) })
		f, msgs, err := runCalls(ctx, set, []string{"slow", "next"}, toolCall("c1", "slow", "{}"), toolCall("c2", "next", "{}"))
		if !errors.Is(err, stopped) {
			t.Fatalf("got %v, want the run's cause", err)
		}
		<-canceled
		if got := f.types(); got != "data-tool-progress,tool-output-error" || ran != 0 || len(msgs) != 1 {
			t.Errorf("got %s, %d later calls ran, %d messages; want progress, the error, nothing after", got, ran, len(msgs))
		}
		if e := f.of("tool-output-error")[0]["errorText"]; e != "The run was stopped before the tool finished." {
			t.Errorf("got %v", e)
		}
	})
}
