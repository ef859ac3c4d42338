package providertest

import (
	"context"
	"io"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// Mock serves the scripted upstream (internal/mockllm) on loopback for the test; it returns
// its base URL and the mock, whose LastRequest shows what a call sent.
func Mock(t *testing.T) (string, *mockllm.Server) {
	t.Helper()
	m := mockllm.New(mockllm.Options{})
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv.URL, m
}

// PlainMatches checks a provider's non-streamed call (llm.Request.Plain) against its streamed
// call of the same mock script, for each model: both end complete and assemble into the same
// response, usage included. req makes the request (its Model is set here).
func PlainMatches(t *testing.T, p llm.Provider, req func() *llm.Request, models ...string) {
	t.Helper()
	for _, m := range models {
		t.Run(m, func(t *testing.T) {
			get := func(plain bool) *llm.Response {
				r := req()
				r.Model, r.Plain = m, plain
				s, err := p.Stream(context.Background(), r)
				if err != nil {
					t.Fatalf("plain=%v: %v", plain, err)
				}
				defer s.Close()
				evs, end := Drain(t, s)
				if end != io.EOF {
					t.Fatalf("plain=%v: the answer ended with %v, want io.EOF", plain, end)
				}
				out := Assemble(evs)
				out.ID = "" // each call is an answer of its own, and so is each tool call
				for i := range out.Choices {
					for j, tc := range out.Choices[i].ToolCalls {
						if tc.ID == "" {
							t.Errorf("plain=%v: tool call %d has no id", plain, j)
						}
						out.Choices[i].ToolCalls[j].ID = ""
					}
					for j := range out.Choices[i].Opaque {
						out.Choices[i].Opaque[j].ID = "" // a call's signature names the call
					}
				}
				return out
			}
			streamed, plain := get(false), get(true)
			if !reflect.DeepEqual(plain, streamed) {
				t.Errorf("the plain answer differs from the streamed one:\nplain    %+v\nstreamed %+v", plain, streamed)
			}
		})
	}
}

// PlainFails checks that each model's non-streamed call fails with the kind given: the
// errors of the HTTP status, of an error object in a 200 answer, of a cut or broken body.
func PlainFails(t *testing.T, p llm.Provider, req func() *llm.Request, kinds map[string]llm.Kind) {
	t.Helper()
	for m, kind := range kinds {
		t.Run(m, func(t *testing.T) {
			r := req()
			r.Model = m
			if err := PlainEnd(t, p, r); llm.KindOf(err) != kind {
				t.Errorf("got %v (%v), want kind %v", llm.KindOf(err), err, kind)
			}
		})
	}
}

// PlainEnd makes req a non-streamed call (llm.Request.Plain) of p and returns what ended it:
// the call's error, or the answer's once read to its end (io.EOF when complete).
func PlainEnd(t *testing.T, p llm.Provider, req *llm.Request) error {
	t.Helper()
	req.Plain = true
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = Drain(t, s)
	return err
}
