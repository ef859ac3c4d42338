package mockllm

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// responsesDialect speaks the OpenAI Responses API: POST .../responses, streamed as the API
// does (testdata/openai-responses-*.sse): response.created and response.in_progress, then per
// output item (reasoning, message, function calls) its added, part, delta and done events,
// then response.completed (or response.incomplete when the script's finish is length or
// content_filter), every event with a sequence_number.
type responsesDialect struct{ openaiErrors }

func (responsesDialect) serves(sc *script) error { return notEmbeddings(sc) }

func (responsesDialect) last() []byte { return nil }

// response is the answer's Response object with status and output; usage is set once the
// response is over.
func (a *answer) response(status string, output []any) *openai.Response {
	e := a.req.responses
	if e == nil { // a request of another dialect
		e = &responsesEcho{}
	}
	if output == nil {
		output = []any{}
	}
	r := &openai.Response{ID: fmt.Sprintf("resp_mock_%d", a.seq), Object: "response", CreatedAt: a.created,
		Status: status, Instructions: rawOr(e.instructions, "null"), MaxOutputTokens: e.maxOutputTokens,
		Model: a.model, Output: output, ParallelToolCalls: true, PreviousResponseID: e.previousResponseID,
		Reasoning: rawOr(e.reasoning, "null"), ServiceTier: "default", Store: e.store,
		Temperature: e.temperature, Text: json.RawMessage(`{"format":{"type":"text"}}`),
		ToolChoice: rawOr(e.toolChoice, `"auto"`), Tools: rawOr(e.tools, "[]"), TopP: e.topP,
		Truncation: "disabled", Metadata: rawOr(e.metadata, "{}")}
	if status == "completed" || status == "incomplete" {
		u := &openai.ResponseUsage{InputTokens: a.usage.PromptTokens, OutputTokens: a.usage.CompletionTokens,
			TotalTokens: a.usage.TotalTokens}
		u.OutputTokensDetails.ReasoningTokens = a.usage.CompletionTokensDetails.ReasoningTokens
		r.Usage = u
	}
	switch a.choices[0].finish {
	case "length":
		r.IncompleteDetails = &openai.IncompleteDetails{Reason: "max_output_tokens"}
	case "content_filter":
		r.IncompleteDetails = &openai.IncompleteDetails{Reason: "content_filter"}
	}
	if status != "incomplete" {
		r.IncompleteDetails = nil
	}
	return r
}

// terminal is the status a finished response ends with.
func (a *answer) terminal() string {
	if f := a.choices[0].finish; f == "length" || f == "content_filter" {
		return "incomplete"
	}
	return "completed"
}

// item is one output item of a Responses answer.
type item struct {
	kind   string // reasoning, message or function_call
	id     string
	deltas []string
	whole  string
	call   call
	status string // when done: completed, or incomplete for the item max= cut
}

// responsesItems are the output items of the answer's choice: reasoning, the message (text
// or refusal), then one function_call per tool call.
func responsesItems(a *answer) []item {
	ch := a.choices[0]
	var out []item
	if len(ch.reasoning) > 0 {
		out = append(out, item{kind: "reasoning", id: fmt.Sprintf("rs_mock_%d", a.seq), deltas: ch.reasoning,
			whole: strings.Join(ch.reasoning, "")})
	}
	if len(ch.content) > 0 {
		out = append(out, item{kind: "message", id: fmt.Sprintf("msg_mock_%d", a.seq), deltas: ch.content,
			whole: strings.Join(ch.content, "")})
	}
	for i, cl := range ch.calls {
		out = append(out, item{kind: "function_call", id: fmt.Sprintf("fc_mock_%d_%d", a.seq, i),
			deltas: cl.frags, whole: cl.args, call: cl})
	}
	for i := range out {
		out[i].status = "completed"
	}
	if len(out) > 0 && a.terminal() == "incomplete" {
		out[len(out)-1].status = "incomplete"
	}
	return out
}

// done is the item as output_item.done and the finished response carry it; added is its
// output_item.added form.
func (it item) done(a *answer, added bool) any {
	switch it.kind {
	case "reasoning":
		r := openai.ReasoningItem{ID: it.id, Type: "reasoning", Summary: []openai.SummaryPart{}}
		if a.req.responses != nil && a.req.responses.encrypted {
			sum := sha256.Sum256([]byte("mockllm:" + it.whole))
			r.EncryptedContent = "gAAAAA" + base64.URLEncoding.EncodeToString(sum[:])
		}
		if !added {
			r.Summary = []openai.SummaryPart{{Type: "summary_text", Text: it.whole}}
		}
		return r
	case "message":
		m := openai.MessageItem{ID: it.id, Type: "message", Status: it.status, Content: []any{it.part(a, it.whole)},
			Role: "assistant"}
		if added {
			m.Status, m.Content = "in_progress", []any{}
		}
		return m
	}
	f := openai.FunctionCallItem{ID: it.id, Type: "function_call", Status: it.status, Arguments: it.whole,
		CallID: it.call.id, Name: it.call.name}
	if added {
		f.Status, f.Arguments = "in_progress", ""
	}
	return f
}

// part is the message's content part holding s: output_text, or refusal for refuse.
func (it item) part(a *answer, s string) any {
	if a.sc.refuse {
		return openai.RefusalPart{Type: "refusal", Refusal: s}
	}
	return openai.OutputText{Type: "output_text", Annotations: []struct{}{}, Logprobs: []struct{}{}, Text: s}
}

func (responsesDialect) whole(a *answer) any {
	var out []any
	for _, it := range responsesItems(a) {
		out = append(out, it.done(a, false))
	}
	return a.response(a.terminal(), out)
}

// responsesFrames numbers the events of one stream.
type responsesFrames struct {
	frames    [][]byte
	lastDelta int // frames up to and including the last delta, for end=nofinish
}

func (f *responsesFrames) emit(e openai.ResponseEvent) {
	e.SequenceNumber = len(f.frames)
	f.frames = append(f.frames, eventFrame(e.Type, e))
}

func (responsesDialect) frames(a *answer) (pre, body [][]byte) {
	var f responsesFrames
	f.emit(openai.ResponseEvent{Type: "response.created", Response: a.response("in_progress", nil)})
	f.emit(openai.ResponseEvent{Type: "response.in_progress", Response: a.response("in_progress", nil)})
	var output []any
	for i, it := range responsesItems(a) {
		ev := func(typ string) openai.ResponseEvent {
			return openai.ResponseEvent{Type: typ, ItemID: it.id, OutputIndex: &i}
		}
		f.emit(openai.ResponseEvent{Type: "response.output_item.added", OutputIndex: &i, Item: it.done(a, true)})
		zero := 0
		switch it.kind {
		case "reasoning":
			e := ev("response.reasoning_summary_part.added")
			e.SummaryIndex, e.Part = &zero, openai.SummaryPart{Type: "summary_text", Text: ""}
			f.emit(e)
			for _, d := range it.deltas {
				e := ev("response.reasoning_summary_text.delta")
				e.SummaryIndex, e.Delta = &zero, &d
				f.emit(e)
				f.lastDelta = len(f.frames)
			}
			e = ev("response.reasoning_summary_text.done")
			e.SummaryIndex, e.Text = &zero, &it.whole
			f.emit(e)
			e = ev("response.reasoning_summary_part.done")
			e.SummaryIndex, e.Part = &zero, openai.SummaryPart{Type: "summary_text", Text: it.whole}
			f.emit(e)
		case "message":
			kind := "output_text"
			if a.sc.refuse {
				kind = "refusal"
			}
			e := ev("response.content_part.added")
			e.ContentIndex, e.Part = &zero, it.part(a, "")
			f.emit(e)
			for _, d := range it.deltas {
				e := ev("response." + kind + ".delta")
				e.ContentIndex, e.Delta = &zero, &d
				if !a.sc.refuse {
					e.Logprobs = json.RawMessage("[]")
				}
				f.emit(e)
				f.lastDelta = len(f.frames)
			}
			e = ev("response." + kind + ".done")
			e.ContentIndex = &zero
			if a.sc.refuse {
				e.Refusal = &it.whole
			} else {
				e.Text, e.Logprobs = &it.whole, json.RawMessage("[]")
			}
			f.emit(e)
			e = ev("response.content_part.done")
			e.ContentIndex, e.Part = &zero, it.part(a, it.whole)
			f.emit(e)
		case "function_call":
			for _, d := range it.deltas {
				e := ev("response.function_call_arguments.delta")
				e.Delta = &d
				f.emit(e)
				f.lastDelta = len(f.frames)
			}
			e := ev("response.function_call_arguments.done")
			e.Arguments = &it.whole
			f.emit(e)
		}
		done := it.done(a, false)
		f.emit(openai.ResponseEvent{Type: "response.output_item.done", OutputIndex: &i, Item: done})
		output = append(output, done)
	}
	status := a.terminal()
	f.emit(openai.ResponseEvent{Type: "response." + status, Response: a.response(status, output)})
	pre, body = f.frames[:2], f.frames[2:]
	switch a.sc.end {
	case "nofinish": // the stream ends after the last delta, or after the preamble
		body = body[:max(f.lastDelta-2, 0)]
	case "nodone": // no terminal event
		body = body[:len(body)-1]
	}
	return pre, body
}

// inband is fail=error's error event, nested (what the API sends,
// testdata/openai-responses-instream-error.sse) or with errshape=flat top-level code and
// message (openai-go's ResponseErrorEvent, testdata/openai-responses-instream-error-flat.sse),
// then response.failed unless end=nodone; fail=event is response.failed alone.
func (responsesDialect) inband(a *answer, sc *script, seq int) [][]byte {
	typ, code, msg := "server_error", "server_error", "The server had an error while processing your request. Sorry about that!"
	if sc.fail == "ratelimit" {
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."
	}
	typ, code, msg = or(sc.typ, typ), or(sc.code, code), or(sc.msg, msg)
	var out [][]byte
	if sc.fail != "event" {
		e := openai.ResponseEvent{Type: "error", SequenceNumber: seq}
		if sc.flat {
			e.Code, e.Message, e.Param = &code, &msg, json.RawMessage("null")
		} else {
			e.Error = &openai.NestedError{Type: typ, Code: code, Message: msg, Param: json.RawMessage("null")}
		}
		out = append(out, eventFrame("error", e))
		seq++
		if sc.end == "nodone" {
			return out
		}
	}
	r := a.response("failed", nil)
	r.Error = &openai.ResponseError{Code: code, Message: msg}
	return append(out, eventFrame("response.failed", openai.ResponseEvent{Type: "response.failed",
		SequenceNumber: seq, Response: r}))
}
