package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun starts the command on a free port, leaves a stalled stream open, and checks that
// canceling run's context stops it cleanly anyway.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", fixtures: "../../internal/mockllm/testdata", quiet: true, out: pw})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	base := strings.TrimSpace(strings.TrimPrefix(line, "mockllm listening on "))

	resp, err := http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"replay?file=openai-chat-text.sse","messages":[],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("replay body: got %d bytes without [DONE] at the end, want the fixture", len(body))
	}

	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(base, "/v1")+"/v1/messages",
		strings.NewReader(`{"model":"text?len=5","max_tokens":10,"messages":[],"stream":true}`))
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasSuffix(string(body), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
		t.Errorf("Anthropic stream: got %q, want it to end with message_stop", body)
	}

	stalled, err := http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"text?fail=stall","messages":[],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: got %v, want nil", err)
	}
	io.Copy(io.Discard, stalled.Body)
	http.DefaultClient.CloseIdleConnections()
}

func TestRunBadAddr(t *testing.T) {
	if err := run(t.Context(), config{addr: "127.0.0.1:-1", out: io.Discard}); err == nil {
		t.Error("run with a bad address: got nil, want an error")
	}
}
