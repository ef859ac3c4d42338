package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// failing is a mock upstream that answers 500 while fail is set.
type failing struct {
	mock *mockllm.Server
	fail atomic.Bool
}

func (f *failing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.fail.Load() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"upstream down","type":"server_error"}}`))
		return
	}
	f.mock.ServeHTTP(w, r)
}

// agentTurn is turn k (0-based) of conversation c, as a Chat client sends it: the system
// prompt and first task, the history so far, no session key (affinity goes by the prefix).
func agentTurn(c, k int) string {
	msgs := []map[string]string{
		{"role": "system", "content": fmt.Sprintf("You are coding agent %d.", c)},
		{"role": "user", "content": fmt.Sprintf("Task %d: fix the failing test.", c)},
	}
	for i := range k {
		msgs = append(msgs, map[string]string{"role": "assistant", "content": fmt.Sprintf("Step %d done.", i)},
			map[string]string{"role": "user", "content": fmt.Sprintf("Go on with step %d.", i+1)})
	}
	b, _ := json.Marshal(map[string]any{"model": "agents", "messages": msgs})
	return string(b)
}

// The affinity test of issue 46: three replicas sharing one Redis, an alias with a weighted
// group of two equal targets, 50 conversations of 10 turns spread round-robin over the
// replicas. At least 95% of the turns after the first land on their conversation's first
// target; the conversations split within 35-65%. Then one target fails (500): its
// conversations move to the other and stay there, also once it is back.
func TestAffinityFleet(t *testing.T) {
	srv := redistest.Start(t)
	ups := [2]*failing{{mock: mockllm.New(mockllm.Options{})}, {mock: mockllm.New(mockllm.Options{})}}
	vars := map[string]string{"REDIS_URL": srv.URL}
	for i, u := range ups {
		hs := httptest.NewServer(u)
		t.Cleanup(hs.Close)
		vars[fmt.Sprint("UP", i)] = hs.URL
	}
	yaml := `providers:
  a: {kind: openai-compatible, base_url: "${UP0}/v1"}
  b: {kind: openai-compatible, base_url: "${UP1}/v1"}
models:
  agents: {targets: [{group: [a/echo, b/echo]}]}
redis: {url: "${REDIS_URL}", timeout: 2s, on_failure: open}
`
	var replicas [3]string
	for i := range replicas {
		replicas[i] = serveGate(t, yaml, vars, time.Minute, nil)
	}
	const convs, turns = 50, 10
	var sent atomic.Int64
	// ask sends turn k of conversation c to the next replica, round-robin, and returns the
	// target that served ("" for an error answer).
	ask := func(c, k int) string {
		r := do(t, http.MethodPost, replicas[sent.Add(1)%3]+"/v1/chat/completions", "", agentTurn(c, k))
		if r.status != http.StatusOK {
			return ""
		}
		return r.header.Get("X-Sluice-Target")
	}
	served := make([][]string, convs)
	for c := range served {
		served[c] = make([]string, turns)
	}
	for k := range turns {
		var wg sync.WaitGroup
		work := make(chan int)
		for range 8 {
			wg.Go(func() {
				for c := range work {
					served[c][k] = ask(c, k)
				}
			})
		}
		for c := range convs {
			work <- c
		}
		close(work)
		wg.Wait()
	}
	same, onA := 0, 0
	for c, s := range served {
		if s[0] == "" {
			t.Fatalf("conversation %d: its first turn failed", c)
		}
		if s[0] == "a/echo" {
			onA++
		}
		for _, got := range s[1:] {
			if got == s[0] {
				same++
			}
		}
	}
	if share := float64(same) / (convs * (turns - 1)); share < 0.95 {
		t.Errorf("got %.1f%% of later turns on the conversation's first target, want at least 95%%", 100*share)
	}
	if share := float64(onA) / convs; share < 0.35 || share > 0.65 {
		t.Errorf("got %d of %d conversations on a/echo, want 35-65%%", onA, convs)
	}

	// a fails: its conversations move to b once a cools down (3 failures, fleet-wide).
	// Between failures, the replicas' one-second health caches expire, so that the fourth
	// request sees the cooldown instead of adding failures (each doubles the cool-off).
	ups[0].fail.Store(true)
	var moved []int
	for c, s := range served {
		if s[0] == "a/echo" {
			moved = append(moved, c)
		}
	}
	failures := 0
	var cooled time.Time
	for i, c := range moved {
		got := ask(c, turns+i%turns)
		switch got {
		case "":
			failures++
			if failures > 3 {
				t.Fatalf("got %d failed turns, want a to cool down after 3", failures)
			}
			time.Sleep(1100 * time.Millisecond)
			cooled = time.Now()
		case "b/echo":
		default:
			t.Fatalf("conversation %d while a fails: got %q, want b/echo", c, got)
		}
	}
	for _, c := range moved {
		if got := ask(c, turns-1); got != "b/echo" {
			t.Errorf("conversation %d after a cooled down: got %q, want b/echo", c, got)
		}
	}
	// a is back and its cooldown over: the moved conversations stay on b, b's stay too.
	ups[0].fail.Store(false)
	time.Sleep(time.Until(cooled.Add(5*time.Second + 200*time.Millisecond)))
	for c := range convs {
		if got := ask(c, turns-1); got != "b/echo" {
			t.Errorf("conversation %d with a back: got %q, want b/echo", c, got)
		}
	}
	// New conversations still reach a.
	fresh := 0
	for c := convs; c < convs+20; c++ {
		if ask(c, 0) == "a/echo" {
			fresh++
		}
	}
	if fresh == 0 {
		t.Errorf("no new conversation on a/echo once it is back, want some of 20")
	}
}
