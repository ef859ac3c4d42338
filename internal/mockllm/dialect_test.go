package mockllm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCancelDialects leaves in the middle of each dialect's waits and checks the handler
// noticed, as TestCancel does for Chat.
func TestCancelDialects(t *testing.T) {
	tests := []struct {
		name, path, body string
		headers          []string
		events           int // events to read before leaving
	}{
		{"messages stall after message_start", "/messages", anthropicBody("text?fail=stall", true), anthropicHeaders, 1},
		{"messages delay", "/messages", anthropicBody("text?len=20&chunk=5&delay=1h", true), anthropicHeaders, 2},
		{"messages non-stream stall", "/messages", anthropicBody("text?fail=stall", false), anthropicHeaders, 0},
		{"responses stall after preamble", "/responses", responsesBody("text?fail=stall", true, nil), nil, 2},
		{"responses first", "/responses", responsesBody("text?first=1h", true, nil), nil, 2},
		{"responses wait", "/responses", responsesBody("text?wait=1h", true, nil), nil, -1},
		{"embeddings stall", "/embeddings", `{"model":"embed?fail=stall","input":"x"}`, nil, 0},
		{"embeddings first", "/embeddings", `{"model":"embed?first=1h","input":"x"}`, nil, -1},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				s := newTestServer()
				if tt.events < 0 { // the handler waits before the headers: leave as it starts
					s.opts.Logf = func(string, ...any) { cancel() }
				}
				c, base, stop := m.start(t, s)
				if tt.events < 0 {
					resp, err := c.Do(mustRequest(ctx, t, base+tt.path, tt.body, tt.headers))
					if err == nil {
						resp.Body.Close()
						t.Fatal("got a response, want the context's error")
					}
					stop()
					want(t, "canceled", s.Canceled(), 1)
					return
				}
				resp, err := c.Do(mustRequest(ctx, t, base+tt.path, tt.body, tt.headers))
				if err != nil {
					t.Fatal(err)
				}
				want(t, "status", resp.StatusCode, 200)
				br := bufio.NewReader(resp.Body)
				for range tt.events {
					if _, err := readEvent(br); err != nil {
						t.Fatalf("reading event: %v", err)
					}
				}
				cancel()
				if _, err := io.ReadAll(br); !errors.Is(err, context.Canceled) {
					t.Errorf("read after cancel: got %v, want context.Canceled", err)
				}
				resp.Body.Close()
				stop()
				want(t, "canceled", s.Canceled(), 1)
			})
		}
	}
}

// TestMaxChat checks max= cuts a Chat answer too: the arguments stop mid-JSON and the finish
// reason is length.
func TestMaxChat(t *testing.T) {
	s := newTestServer()
	c, base, _ := modes[1].start(t, s)
	resp, err := post(t.Context(), c, base, chatBody("tools?say=Hi.&max=4&calls=2", "x", true, false))
	if err != nil {
		t.Fatal(err)
	}
	f := parseStream(t, readAll(t, resp))
	want(t, "content", f.content, []string{"Hi."})
	want(t, "calls", f.calls, []string{`get_weather({"location":")`})
	want(t, "finish", f.finish, []string{"length"})
	resp, err = post(t.Context(), c, base, chatBody("reason?think=10&len=10&max=2", "x", true, false))
	if err != nil {
		t.Fatal(err)
	}
	f = parseStream(t, readAll(t, resp))
	want(t, "reasoning", f.reasoning, generate(10, 1001)[:8])
	want(t, "content", f.content, []string{""})
	want(t, "finish", f.finish, []string{"length"})
}

func mustRequest(ctx context.Context, t *testing.T, url, body string, headers []string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// FuzzParse feeds request bodies to every dialect's parser, then renders what parses with
// an echo (or embed) script, streamed and whole: no input may panic, and a request that
// parses has a model.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		anthropicBody("echo", true), responsesBody("echo", true, nil), string(chatBody("echo", "hi", true, true)),
		`{"model":"embed","input":[[1,2],[3]],"encoding_format":"base64","dimensions":4}`,
		`{"model":"echo","input":[{"role":"user","content":[{"type":"input_text","text":"é"}]}]}`,
		`{"model":"echo","max_tokens":1,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":null}]}`,
		`{"model":"x","input":{"a":1}}`, `[]`, `null`,
	} {
		f.Add(seed)
	}
	h := http.Header{"X-Api-Key": {"k"}, "Anthropic-Version": {"2023-06-01"}}
	f.Fuzz(func(t *testing.T, body string) {
		for _, d := range []dialect{chatDialect{}, anthropicDialect{}, responsesDialect{}, embeddingsDialect{}} {
			req, rerr := d.parse(h, []byte(body))
			if rerr != nil {
				continue
			}
			if req.model == "" {
				t.Fatalf("%T parsed %q without a model", d, body)
			}
			name := "echo?chunk=3&calls=1&think=5"
			if _, ok := d.(embeddingsDialect); ok {
				name = "embed?dims=3"
			}
			sc, err := parseScript(name)
			if err != nil {
				t.Fatal(err)
			}
			a := newAnswer(sc, req, 1, 0)
			d.frames(a)
			marshal(d.whole(a))
		}
	})
}
