package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// chat serves POST /v1/chat/completions.
func (s *Server) chat(c echo.Context) error {
	chain, run, req, err := s.start(c, func(b []byte) (string, *llm.Request, error) {
		cr, err := decodeChat(b)
		if err != nil {
			return "", nil, err
		}
		return cr.Model, &cr.req, nil
	}, nil)
	if err != nil {
		return s.reject(c, err)
	}
	w := &chatWire{id: "chatcmpl-" + reqInfo(c).ID, created: time.Now().Unix(), includeUsage: req.IncludeUsage}
	if req.Stream {
		return s.serveStream(c, chain, run, w)
	}
	return s.serveOnce(c, chain, run, w)
}

// chatWire is the Chat Completions wire of one request: chunks, the usage chunk when asked,
// [DONE]; the in-band error frame; the chat.completion body.
type chatWire struct {
	id           string
	created      int64
	includeUsage bool
	sink         *chatSink
}

func (w *chatWire) open(ew *sse.Writer, st *fallback.Stream) (relay.Sink, error) {
	w.sink = newChatSink(ew, w.id, w.created, st.Model, w.includeUsage)
	return w.sink, nil
}

func (w *chatWire) end(u *llm.Usage) error { return w.sink.end(u) }

func (w *chatWire) fail(ew *sse.Writer, err error) error { return ew.Frame(inband(oai.ErrorBody(err))) }

func (w *chatWire) attempt(*fallback.Stream) relay.Sink { return discard{} }

func (w *chatWire) body(st *fallback.Stream, resp *llm.Response) []byte {
	return completion(w.id, w.created, st.Model, resp)
}

func (s *Server) reject(c echo.Context, err error) error {
	reqInfo(c).Kind = llm.KindOf(err).String()
	return writeError(c, err)
}

func (s *Server) relayOptions(chain *fallback.Chain) relay.Options {
	p := s.o.Policies[chain.Alias]
	return relay.Options{NewWindow: s.o.NewWindow, RedactJSON: s.o.RedactJSON, Start: time.Now(),
		ThinkFilter: p.ThinkFilter, Coalesce: p.Coalesce}
}

// served sets the headers that say who served.
func served(c echo.Context, run *fallback.Run, st *fallback.Stream) {
	setServed(reqInfo(c), run, st, c.Response().Header())
}

func setServed(in *telemetry.Access, run *fallback.Run, st *fallback.Stream, h http.Header) {
	in.Attempts, in.Tries = len(run.Attempts), run.Attempts
	h.Set("X-Sluice-Attempts", strconv.Itoa(in.Attempts))
	if st != nil {
		in.Target = st.Target
		h.Set("X-Sluice-Target", st.Target)
	}
}

// finished completes the round's response with who served it, and the access record with
// what a reader waited for.
func finished(in *telemetry.Access, run *fallback.Run, st *fallback.Stream, resp *llm.Response) {
	resp.Target, resp.Attempts, resp.FirstEvent = st.Target, run.Attempts, st.FirstEvent()
	if in.FirstText == 0 { // the request's first text: a later round's does not replace it
		in.FirstEvent, in.FirstText = resp.FirstEvent, resp.FirstText
	}
	in.Usage = accessUsage(resp.Usage) // the limiter reconciles its token reservation with it
	// Telemetry makes the attempt spans and the response's span attributes from these.
	in.Tries, in.Response = run.Attempts, resp
	for det, n := range resp.Redactions {
		in.Redactions += n
		if in.Masks == nil {
			in.Masks = map[string]int{}
		}
		in.Masks[det] += n
	}
}

// redactInput masks secrets in the prompt before any provider sees it (an alias's
// redact_input): text parts as text, tool-call arguments as JSON, so they still parse. The
// decoded request is the handler's own: it is changed in place.
func redactInput(req *llm.Request, text, json func(string) string) {
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Parts {
			if m.Parts[j].Type == llm.PartText {
				m.Parts[j].Text = text(m.Parts[j].Text)
			}
		}
		for j := range m.ToolCalls {
			m.ToolCalls[j].Arguments = json(m.ToolCalls[j].Arguments)
		}
	}
}

// midstream is the in-band error of a target that failed after the answer started.
func midstream(target string, err error) error {
	k := llm.KindOf(err)
	msg := target + " failed after the answer started"
	var le *llm.Error
	if errors.As(err, &le) {
		detail := le.Message
		if le.Code != "" {
			detail = le.Code + ": " + detail
		} else if le.Type != "" {
			detail = le.Type + ": " + detail
		}
		if detail != "" && le.Kind != llm.Auth {
			msg += ": " + detail
		}
	}
	code := "upstream_error"
	if k == llm.Truncated {
		code = "upstream_truncated"
	} else if k == llm.Timeout {
		code = "upstream_timeout"
	}
	return &llm.Error{Kind: k, Type: "server_error", Code: code, Message: msg}
}

// discard is the sink of a non-streamed request: the relay keeps the complete response.
type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wireUsage    `json:"usage"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      wireOutMessage  `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type wireOutMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	Refusal          *string        `json:"refusal"`
	Reasoning        *string        `json:"reasoning,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	PromptDetails    struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// completion encodes the assembled chat.completion object.
func completion(id string, created int64, model string, resp *llm.Response) []byte {
	out := wireCompletion{ID: id, Object: "chat.completion", Created: created, Model: model, Choices: []wireChoice{}}
	for _, ch := range resp.Choices {
		m := wireOutMessage{Role: "assistant"}
		if ch.Text != "" || (ch.Refusal == "" && len(ch.ToolCalls) == 0) {
			t := ch.Text
			m.Content = &t
		}
		if ch.Refusal != "" {
			r := ch.Refusal
			m.Refusal = &r
		}
		if ch.Reasoning != "" {
			r := ch.Reasoning
			if ch.ReasoningField == "reasoning" {
				m.Reasoning = &r
			} else {
				m.ReasoningContent = &r
			}
		}
		for _, tc := range ch.ToolCalls {
			w := wireToolCall{ID: tc.ID, Type: "function"}
			w.Function.Name, w.Function.Arguments = tc.Name, tc.Arguments
			m.ToolCalls = append(m.ToolCalls, w)
		}
		lp := joinLogprobs(ch.Logprobs)
		if lp == nil {
			lp = json.RawMessage("null")
		}
		out.Choices = append(out.Choices, wireChoice{Index: ch.Index, Message: m, Logprobs: lp, FinishReason: ch.Finish})
	}
	u := &out.Usage
	u.PromptTokens, u.CompletionTokens, u.TotalTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.TotalTokens
	u.PromptDetails.CachedTokens = resp.Usage.CachedTokens
	u.CompletionDetails.ReasoningTokens = resp.Usage.ReasoningTokens
	// No HTML escaping: OpenAI writes "&" and "<" as they are, and so do the streamed chunks.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
