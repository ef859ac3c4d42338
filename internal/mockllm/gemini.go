package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluice-gw/sluice/internal/schema/gemini"
)

// geminiDialect speaks the Gemini API: POST .../models/{model}:generateContent, and
// :streamGenerateContent?alt=sse, streamed as the API does (provider/gemini's testdata): one
// GenerateContentResponse per "data:" event, thought parts, then text parts, then the
// function calls whole in one chunk (the first carries a made-up thoughtSignature, as
// Gemini 2.5 and later models sign their calls); the last chunk carries finishReason and
// usageMetadata. There is no preamble and no terminator. The model is the path's, so a
// value holds the request's path and query (it is made per request).
type geminiDialect struct {
	model  string
	stream bool
	keyed  bool // ?key= was given
}

// geminiPath splits a path .../models/{model}:{method} (escaped as sent) into the model and
// whether the method streams; ok is false for any other method.
func geminiPath(u *url.URL) (model string, stream, ok bool) {
	p := u.EscapedPath()
	i := strings.Index(p, "/models/")
	j := strings.LastIndexByte(p, ':')
	if i < 0 || j < i {
		return "", false, false
	}
	model, err := url.PathUnescape(p[i+len("/models/") : j])
	switch method := p[j+1:]; {
	case err != nil || model == "":
		return "", false, false
	case method == "streamGenerateContent":
		return model, true, true
	case method == "generateContent":
		return model, false, true
	}
	return "", false, false
}

func (d geminiDialect) parse(h http.Header, raw []byte) (*request, *reqError) {
	if !d.keyed && h.Get("X-Goog-Api-Key") == "" && h.Get("Authorization") == "" {
		return nil, &reqError{http.StatusForbidden, newAPIError("PERMISSION_DENIED", "",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")}
	}
	var req gemini.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, &reqError{http.StatusBadRequest, newAPIError("INVALID_ARGUMENT", "",
			"Invalid JSON payload received. "+err.Error())}
	}
	if len(req.Contents) == 0 {
		return nil, &reqError{http.StatusBadRequest, newAPIError("INVALID_ARGUMENT", "", "* GenerateContentRequest.contents: contents is not specified")}
	}
	r := &request{model: d.model, stream: d.stream, single: true}
	if req.SystemInstruction != nil {
		r.promptBytes += len(geminiText(req.SystemInstruction.Parts))
	}
	for _, c := range req.Contents {
		t := geminiText(c.Parts)
		r.promptBytes += len(t)
		r.afterTool, r.toolText = false, ""
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				r.afterTool, r.toolText = true, geminiResult(p.FunctionResponse.Response)
			}
		}
		if c.Role != "model" && !r.afterTool {
			r.user = t // the last one wins: echo answers the last user turn
		}
	}
	return r, nil
}

// geminiText is the text of parts (thoughts left out), joined by "\n".
func geminiText(parts []gemini.Part) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// geminiResult is what then=echo quotes of a functionResponse's response: its one string
// member ({"output": "..."}, as agents answer), or else the object's JSON.
func geminiResult(resp json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) == nil && len(m) == 1 {
		for _, v := range m {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return string(resp)
}

func (geminiDialect) serves(sc *script) error { return notEmbeddings(sc) }

func (geminiDialect) last() []byte { return nil }

func googleError(status int, msg string) gemini.ErrorBody {
	return gemini.ErrorBody{Error: &gemini.Status{Code: status, Message: msg, Status: gemini.StatusOf(status)}}
}

func (geminiDialect) errorBody(status int, e apiError) any {
	return googleError(status, e.Error.Message)
}

// scripted answers fail=STATUS in Google's shape; a non-streamed fail=error or event is the
// 503 UNAVAILABLE its stream would have carried, fail=ratelimit a 429.
func (geminiDialect) scripted(sc *script, model string) (int, any) {
	status := sc.faultStatus(http.StatusServiceUnavailable)
	msg := "mockllm: scripted error"
	switch status {
	case http.StatusTooManyRequests:
		msg = "You exceeded your current quota, please check your plan and billing details. (mockllm)"
	case http.StatusServiceUnavailable:
		msg = "The model is overloaded. Please try again later."
	case http.StatusNotFound:
		msg = "models/" + model + " is not found for API version v1beta, or is not supported for generateContent."
	}
	return status, googleError(status, or(sc.msg, msg))
}

// inband is an error body as the stream's next event, after which the stream ends
// (provider/gemini's testdata/gemini-instream-error.chunks.txt).
func (d geminiDialect) inband(_ *answer, sc *script, _ int) [][]byte {
	_, body := d.scripted(&script{fail: sc.fail, msg: sc.msg}, "")
	return [][]byte{geminiFrame(body)}
}

// geminiFrame is one event of an alt=sse stream: Google ends its events with CRLF CRLF.
func geminiFrame(v any) []byte {
	return append(append([]byte("data: "), marshal(v)...), "\r\n\r\n"...)
}

// finishReason maps the script's finish to Gemini's: a function call ends with STOP, as
// the API ends it.
func (a *answer) finishReason() string {
	switch f := a.choices[0].finish; {
	case a.sc.refuse && a.sc.finish == "" || f == "content_filter":
		return "SAFETY"
	case f == "stop" || f == "tool_calls":
		return "STOP"
	case f == "length":
		return "MAX_TOKENS"
	default:
		return strings.ToUpper(f)
	}
}

func (a *answer) usageMetadata() *gemini.UsageMetadata {
	thoughts := a.usage.CompletionTokensDetails.ReasoningTokens
	return &gemini.UsageMetadata{PromptTokenCount: a.usage.PromptTokens,
		CandidatesTokenCount: a.usage.CompletionTokens - thoughts, ThoughtsTokenCount: thoughts,
		TotalTokenCount: a.usage.TotalTokens}
}

// geminiChunks are the answer as GenerateContentResponses: a chunk per reasoning and text
// delta, one chunk holding every call, the finish and usage on the last (none with
// end=nofinish). whole makes it one chunk with each kind's deltas joined.
func (a *answer) geminiChunks(whole bool) []gemini.Response {
	ch := a.choices[0]
	var parts [][]gemini.Part
	add := func(deltas []string, thought bool) {
		if whole && len(deltas) > 0 {
			deltas = []string{strings.Join(deltas, "")}
		}
		for _, d := range deltas {
			parts = append(parts, []gemini.Part{{Text: d, Thought: thought}})
		}
	}
	add(ch.reasoning, true)
	add(ch.content, false)
	var calls []gemini.Part
	for i, cl := range ch.calls {
		p := gemini.Part{FunctionCall: &gemini.FunctionCall{Name: cl.name, Args: json.RawMessage(cl.args)}}
		if !json.Valid([]byte(cl.args)) { // cut by max=: the API sends no half call
			continue
		}
		if i == 0 {
			p.ThoughtSignature = signature(fmt.Sprintf("%s:%s", cl.name, cl.args))
		}
		calls = append(calls, p)
	}
	if len(calls) > 0 {
		parts = append(parts, calls)
	}
	if whole && len(parts) > 1 {
		parts = [][]gemini.Part{joinParts(parts)}
	}
	if len(parts) == 0 {
		parts = [][]gemini.Part{{{Text: ""}}}
	}
	out := make([]gemini.Response, len(parts))
	for i, ps := range parts {
		out[i] = gemini.Response{Candidates: []gemini.Candidate{{Content: &gemini.Content{Role: "model", Parts: ps}}},
			ModelVersion: a.model, ResponseID: fmt.Sprintf("mock-%d", a.seq)}
	}
	if a.sc.end != "nofinish" || whole {
		last := &out[len(out)-1]
		last.Candidates[0].FinishReason, last.UsageMetadata = a.finishReason(), a.usageMetadata()
	}
	return out
}

func joinParts(parts [][]gemini.Part) []gemini.Part {
	var out []gemini.Part
	for _, ps := range parts {
		out = append(out, ps...)
	}
	return out
}

func (geminiDialect) frames(a *answer) (pre, body [][]byte) {
	for _, c := range a.geminiChunks(false) {
		body = append(body, geminiFrame(c))
	}
	return nil, body
}

func (geminiDialect) whole(a *answer) any { return a.geminiChunks(true)[0] }
