package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func TestResponsesOnTheWire(t *testing.T) {
	u := newUpstream(t, providertest.SSE(respCreated+respCompleted))
	r := u.responses(Config{
		Headers: map[string]string{"api-key": "azure-key"},
		Query:   map[string]string{"api-version": "2025-04-01-preview"},
	})
	if !r.ResponsesAPI() {
		t.Error("ResponsesAPI: got false, want true")
	}
	req := respRequest(includeEncrypted)
	_, end := providertest.Drain(t, openResponses(t, r, req))
	wantEOF(t, end)
	body, header, rawURL := u.Last()
	want, _ := encodeResponsesRequest(req)
	if !bytes.Equal(body, want) {
		t.Errorf("body: got\n%s\nwant\n%s", body, want)
	}
	if got := header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization: got %q, want the bearer key", got)
	}
	if header.Get("Api-Key") != "azure-key" || header.Get("Accept") != "text/event-stream" || header.Get("Content-Type") != "application/json" {
		t.Errorf("headers: got %v, want api-key, Accept text/event-stream, JSON content", header)
	}
	pu, _ := url.Parse(rawURL)
	if pu.Path != "/v1/responses" || pu.Query().Get("api-version") != "2025-04-01-preview" {
		t.Errorf("url: got %s, want /v1/responses?api-version=2025-04-01-preview", rawURL)
	}
}

func TestResponsesStatusErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		kind   llm.Kind
		code   string
	}{
		{"429", 429, map[string]string{"Retry-After": "3"}, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, llm.RateLimited, "rate_limit_exceeded"},
		{"500", 500, nil, `{"error":{"message":"The server had an error","type":"server_error","code":null}}`, llm.Unavailable, ""},
		{"401", 401, nil, `{"error":{"message":"Incorrect API key provided: ` + testKey + `","code":"invalid_api_key"}}`, llm.Auth, "invalid_api_key"},
		{"400", 400, nil, `{"error":{"message":"Previous response with id 'resp_x' not found.","param":"previous_response_id","code":"previous_response_not_found"}}`, llm.Invalid, "previous_response_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			s, err := u.responses(Config{}).Stream(context.Background(), respRequest())
			if s != nil {
				s.Close()
				t.Fatal("got a stream, want an error")
			}
			le := wantKind(t, err, tt.kind)
			if le.Status != tt.status || le.Code != tt.code {
				t.Errorf("got status %d code %q, want %d %q", le.Status, le.Code, tt.status, tt.code)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q holds the key", err)
			}
			if tt.status == 429 && le.RetryAfter != 3*time.Second {
				t.Errorf("retry after: got %v, want 3s", le.RetryAfter)
			}
		})
	}
}

func TestResponsesManyChoicesNotSent(t *testing.T) {
	u := newUpstream(t, providertest.SSE(respCreated+respCompleted))
	req := respRequest()
	req.N = 3
	_, err := u.responses(Config{}).Stream(context.Background(), req)
	if le := wantKind(t, err, llm.Unsupported); le.Param != "n" || llm.HTTPStatus(err) != 400 {
		t.Errorf("got param %q status %d, want n and 400", le.Param, llm.HTTPStatus(err))
	}
	if body, _, _ := u.Last(); body != nil {
		t.Error("the upstream was called, want no call")
	}
}

func TestResponsesAbruptDisconnect(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, respCreated+respText+respCompleted[:30]) // cut mid-event
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	})
	evs, end := providertest.Drain(t, openResponses(t, u.responses(Config{}), respRequest()))
	wantKind(t, end, llm.Truncated)
	if r := assemble(evs); r.Choices[0].Text != "Hello" {
		t.Errorf("text: got %q, want Hello", r.Choices[0].Text)
	}
}

// respBlock serves a start and a text delta, then holds the stream open until the client
// goes, and reports that it saw its context end.
func respBlock(gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, respCreated+respText)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func TestResponsesCancel(t *testing.T) {
	tests := []struct {
		name string
		stop func(cancel context.CancelCauseFunc, s llm.Stream)
		kind llm.Kind
	}{
		{"client left", func(cancel context.CancelCauseFunc, _ llm.Stream) { cancel(nil) }, llm.Canceled},
		{"chain timeout as cause", func(cancel context.CancelCauseFunc, _ llm.Stream) {
			cancel(llm.Errorf(llm.Timeout, "no event within 1s"))
		}, llm.Timeout},
		{"Close", func(_ context.CancelCauseFunc, s llm.Stream) { s.Close() }, llm.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gone := make(chan struct{})
			u := newUpstream(t, respBlock(gone))
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			s, err := u.responses(Config{}).Stream(ctx, respRequest())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for range 2 { // start, text
				if _, err := s.Recv(); err != nil {
					t.Fatalf("got %v, want an event", err)
				}
			}
			time.AfterFunc(20*time.Millisecond, func() { tt.stop(cancel, s) }) // while Recv blocks
			_, err = s.Recv()
			wantKind(t, err, tt.kind)
			if _, again := s.Recv(); again != err {
				t.Errorf("second Recv: got %v, want the same error", again)
			}
			waitGone(t, gone)
		})
	}
}

func TestResponsesDeadline(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, respBlock(gone))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s, err := u.responses(Config{}).Stream(ctx, respRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, end := providertest.Drain(t, s)
	wantKind(t, end, llm.Timeout)
	waitGone(t, gone)
}

// TestResponsesFallback runs the real chain: an error event before any output falls back
// to the next target; an error after text is the committed target's in-band failure.
func TestResponsesFallback(t *testing.T) {
	nested, err := os.ReadFile(filepath.Join("testdata", "openai-responses-instream-error.sse"))
	if err != nil {
		t.Fatal(err)
	}
	flat, err := os.ReadFile(filepath.Join("testdata", "openai-responses-instream-error-flat.sse"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		body     string
		text     string
		end      llm.Kind // KindNone: io.EOF
		attempts int
	}{
		{"error before output falls back", string(nested), "Hello", llm.KindNone, 2},
		{"error after text fails in-band", string(flat), "Partial ans", llm.Unavailable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := newUpstream(t, providertest.SSE(tt.body))
			second := newUpstream(t, providertest.SSE(roleChunk+textChunk+finishChunk+usageChunk+doneLine))
			chain := &fallback.Chain{Alias: "default", Targets: []fallback.Target{
				{Name: "oai-resp/gpt-5", Model: "gpt-5", Provider: first.responses(Config{Name: "oai-resp"})},
				{Name: "openai/gpt-4o", Model: "gpt-4o", Provider: second.client(Config{})},
			}}
			run := chain.Start(respRequest())
			s, err := run.Next(context.Background())
			if err != nil {
				t.Fatalf("Next: got %v, want a stream", err)
			}
			defer s.Close()
			evs, end := providertest.Drain(t, s)
			if tt.end == llm.KindNone {
				wantEOF(t, end)
			} else {
				wantKind(t, end, tt.end)
			}
			if got := assemble(evs).Choices[0].Text; got != tt.text {
				t.Errorf("text: got %q, want %q", got, tt.text)
			}
			if len(run.Attempts) != tt.attempts {
				t.Errorf("attempts: got %+v, want %d", run.Attempts, tt.attempts)
			}
		})
	}
}

// TestResponsesKeepsConnection: a complete answer leaves its connection to the next call
// (the body's closing chunk is read after response.completed, as for Chat).
func TestResponsesKeepsConnection(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, respCreated+respText+respCompleted)
		http.NewResponseController(w).Flush()
		time.Sleep(20 * time.Millisecond) // the closing chunk comes late
	})
	r := u.responses(Config{})
	var reused []bool
	for range 3 {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
		s, err := r.Stream(httptrace.WithClientTrace(t.Context(), trace), respRequest())
		if err != nil {
			t.Fatal(err)
		}
		_, end := providertest.Drain(t, s)
		wantEOF(t, end)
		s.Close()
	}
	if len(reused) != 3 || !reused[1] || !reused[2] {
		t.Errorf("connection reused per call: got %v, want [false true true]", reused)
	}
}
