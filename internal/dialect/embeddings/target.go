package embeddings

import (
	"context"
	"io"
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// poster is a provider that serves plain JSON endpoints of the OpenAI shape (embeddings,
// moderations, images, rerank): body is the client's JSON object, passed on to path with its
// model member set to model; the answer is the upstream's JSON, unchanged. Errors are
// *llm.Error, as from Stream.
type poster interface {
	Plain(ctx context.Context, path, model string, body []byte) ([]byte, error)
}

// plainProvider runs a plain call as a chain attempt: the whole call happens in Stream, and
// the answer is one terminal event (Raw holds the JSON), which commits. So the chain's
// retries, cooldowns, timeouts (first_event bounds the call) and exhausted-chain errors
// apply unchanged. The request's Extra holds the client's members but model.
type plainProvider struct {
	p    poster
	path string
}

var _ llm.Provider = plainProvider{}

// Target is p as the target of an embeddings chain; false when p does not serve embeddings
// (not OpenAI-compatible, or nil).
func Target(p llm.Provider) (llm.Provider, bool) { return TargetOf(p, "embeddings") }

// Targets are the providers of ps that serve the plain endpoint path (and serves allows,
// by name), as its targets.
func Targets(ps map[string]llm.Provider, path string, serves func(name string) bool) map[string]llm.Provider {
	out := map[string]llm.Provider{}
	for name, p := range ps {
		if t, ok := TargetOf(p, path); ok && serves(name) {
			out[name] = t
		}
	}
	return out
}

// TargetOf is p as the target of a chain of the plain endpoint path (dialect.API.Upstream);
// false when p serves no plain endpoint. Which kinds serve which endpoint is the
// configuration's kind table's to say.
func TargetOf(p llm.Provider, path string) (llm.Provider, bool) {
	if passed[path] {
		m, ok := p.(passer)
		if !ok {
			return nil, false
		}
		return passProvider{m, path}, true
	}
	e, ok := p.(poster)
	if !ok {
		return nil, false
	}
	return plainProvider{e, path}, true
}

func (p plainProvider) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	raw, err := p.p.Plain(ctx, p.path, req.Model, Body(req))
	if err != nil {
		return nil, err
	}
	return &oneEvent{ev: llm.Event{Type: llm.EvDone, Finish: "stop", Raw: raw}}, nil
}

// oneEvent is a stream of one event, then io.EOF.
type oneEvent struct {
	ev   llm.Event
	done bool
}

func (s *oneEvent) Recv() (llm.Event, error) {
	if s.done {
		return llm.Event{}, io.EOF
	}
	s.done = true
	return s.ev, nil
}

func (s *oneEvent) Close() error { return nil }

// Answer reads the committed attempt of a plain chain (a Target's stream): its one event,
// the upstream's body, and its clean end, so that the target's health hears the attempt
// ended well. An attempt that did not end cleanly is an Internal error.
func Answer(st llm.Stream) ([]byte, error) {
	ev, err := st.Recv() // the committing event, replayed
	if err == nil {
		_, err = st.Recv() // io.EOF
	}
	if err != io.EOF {
		return nil, &llm.Error{Kind: llm.Internal, Message: "the plain call's attempt did not end cleanly", Err: err}
	}
	return ev.Raw, nil
}

// Read reads the committed attempt of a plain chain (Answer) and its usage as usage finds
// it in the answer (nil: none, the call is counted, not priced).
func Read(st llm.Stream, usage func([]byte) (llm.Usage, bool)) ([]byte, *llm.Usage, error) {
	out, err := Answer(st)
	if err != nil {
		return nil, nil, err
	}
	if u, ok := usage(out); ok {
		return out, &u, nil
	}
	return out, nil, nil
}

// passer is a provider that serves plain endpoints whose answer passes through as it comes
// (speech, transcriptions, image edits: dialect.Media): req's Extra holds the client's
// members but model, and its Files the files of a multipart request (sent multipart then,
// else as a JSON object); the stream's events are the answer's bytes (llm.EvData), the
// first once the upstream answered 2xx. Errors are *llm.Error, as from Stream.
type passer interface {
	Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error)
}

// passed are the upstream paths of the Media wires (Passed): written at init only.
var passed = map[string]bool{}

// Media is the API of a Media wire (speech, transcriptions, image edits): POST path, with
// the OpenAI SDKs' keys and errors, served on its targets' upstream path, whose answer passes
// through (its targets are passers, registered here); streamed: the wire reads its multipart
// body itself (dialect.API.Streamed).
func Media(name, path, upstream string, decode func([]byte, dialect.Input) (*dialect.Decoded, error), streamed bool) dialect.API {
	passed[upstream] = true
	return dialect.API{
		Name:       name,
		Routes:     []dialect.Route{{Method: http.MethodPost, Path: path, Op: dialect.Media}},
		Credential: dialect.Bearer | dialect.XAPIKey,
		Decode:     decode,
		Error:      oai.Error,
		Upstream:   upstream,
		Streamed:   streamed,
	}
}

// passProvider runs a Media call as a chain attempt: the answer's first bytes commit it, so
// that the chain falls back before the client saw any, and its idle timeout bounds the gaps.
type passProvider struct {
	p    passer
	path string
}

func (p passProvider) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	return p.p.Pass(ctx, p.path, req.Model, req)
}
