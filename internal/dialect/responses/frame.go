package responses

import (
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// head starts a frame of type typ in the sink's buffer: the event line, then the data's
// type and sequence_number. The caller appends the rest of the object and sends it.
func (s *stream) head(typ string) []byte {
	b := s.buf[:0]
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":"...)
	b = oai.AppendString(b, typ)
	b = append(b, `,"sequence_number":`...)
	b = oai.AppendInt(b, s.seq)
	s.seq++
	return b
}

// index appends the item's output_index.
func (s *stream) index(b []byte, it *outItem) []byte {
	b = append(b, `,"output_index":`...)
	return oai.AppendInt(b, it.index)
}

// ref appends the item's id and output_index, as the events about its content name it.
func (s *stream) ref(b []byte, it *outItem) []byte {
	b = append(b, `,"item_id":`...)
	b = oai.AppendString(b, it.id)
	return s.index(b, it)
}

// send ends the frame begun by head and writes it.
func (s *stream) send(b []byte) error {
	b = append(b, "}\n\n"...)
	s.buf = b
	return s.ew.Frame(b)
}

// begin announces the response at commit: response.created, then response.in_progress.
func (s *stream) begin() error {
	for _, typ := range []string{"response.created", "response.in_progress"} {
		b := s.head(typ)
		b = append(b, `,"response":`...)
		b = appendResponse(b, s.meta, &respEnd{status: "in_progress"}, nil)
		if err := s.send(b); err != nil {
			return err
		}
	}
	return nil
}

// end closes what is still open and sends the terminal event: response.completed, or
// response.incomplete when max_output_tokens or a content filter cut the answer. No [DONE]
// follows: Responses streams never have one.
func (s *stream) end(u *llm.Usage) error {
	status, reason := respStatus(s.finish)
	if err := s.close(status); err != nil {
		return err
	}
	s.done = &respEnd{status: status, incomplete: reason, usage: u}
	b := s.head("response." + status)
	b = append(b, `,"response":`...)
	b = appendResponse(b, s.meta, s.done, s.items)
	return s.send(b)
}

// body is the Response object of a non-streamed request, from the items the sink assembled.
func (s *stream) body(u *llm.Usage) []byte {
	status, reason := respStatus(s.finish)
	_ = s.close(status) // no writer: cannot fail
	s.done = &respEnd{status: status, incomplete: reason, usage: u}
	return appendResponse(nil, s.meta, s.done, s.items)
}

// fail sends the in-band failure of DESIGN §5: an error event carrying both shapes real
// streams use (flat code and message, which openai-node raises on, and the nested error
// object openai-python and openai-go raise on), then response.failed with what was produced
// so far. Codes are the Responses API's own (server_error, rate_limit_exceeded); the message
// says what failed.
func (s *stream) fail(err error) error {
	e := llm.Public(err)
	code := "server_error"
	if e.Kind == llm.RateLimited {
		code = "rate_limit_exceeded"
	} else if e.Code == "guardrail_refused" {
		code = e.Code // a stream-mode output guardrail (DESIGN §6)
	}
	b := s.head("error")
	b = append(b, `,"code":`...)
	b = oai.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = oai.AppendString(b, e.Message)
	b = append(b, `,"param":null,"error":{"type":`...)
	b = oai.AppendString(b, e.Type)
	b = append(b, `,"code":`...)
	b = oai.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = oai.AppendString(b, e.Message)
	b = append(b, '}')
	if err := s.send(b); err != nil {
		return err
	}
	if s.cur != nil {
		s.cur.status, s.cur = "incomplete", nil // cut where it stood
	}
	b = s.head("response.failed")
	b = append(b, `,"response":`...)
	b = appendResponse(b, s.meta, &respEnd{status: "failed", errCode: code, errMsg: e.Message}, s.items)
	return s.send(b)
}
