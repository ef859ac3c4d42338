package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"

	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// passChunk is the most one EvData of a passed answer holds: an audio answer leaves as it
// comes, in pieces of at most this size.
const passChunk = 32 << 10

// Pass calls POST {base}/{path} (audio/speech, audio/transcriptions, images/edits: issue 48)
// with req's members (Extra) and model, as multipart/form-data when req has files (its
// members as text fields, its files streamed from their spool, the body's length told),
// else as a JSON object. It returns the answer as it comes, as llm.EvData events: the first
// names the media type, and waits for the first bytes, so that the chain commits once the
// answer began; a JSON answer is read whole at once and, when it is an error object, is the
// upstream's failure (as Plain's). A non-2xx answer or a connection failure is an
// *llm.Error, mapped as for a chat call.
func (c *conn) Pass(ctx context.Context, path, model string, req *llm.Request) (llm.Stream, error) {
	ct, body, n := passBody(model, req)
	opts := []option.RequestOption{option.WithRequestBody(ct, body), option.WithHeader("Accept", "*/*")}
	if n >= 0 {
		opts = append(opts, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			r.ContentLength = n // a file streamed from its spool, its length known: no chunked upload
			return next(r)
		}))
	}
	var res *http.Response
	if err := c.sdk.Post(ctx, path, nil, &res, opts...); err != nil {
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		return nil, c.callError(ctx, err)
	}
	return &passStream{o: c.origin, Body: transport.NewBody(ctx, c.name, res.Body), rc: res.Body, ct: res.Header.Get("Content-Type")}, nil
}

// passBody is the body of a Pass call: its content type, its reader, and its length (-1:
// unknown).
func passBody(model string, req *llm.Request) (string, io.Reader, int64) {
	if len(req.Files) == 0 {
		var b bytes.Buffer
		b.WriteString(`{"model":`)
		writeString(&b, model)
		for _, f := range req.Extra {
			b.WriteByte(',')
			writeString(&b, f.Name)
			b.WriteByte(':')
			b.Write(f.Value)
		}
		b.WriteByte('}')
		return "application/json", bytes.NewReader(b.Bytes()), int64(b.Len())
	}
	// The multipart body is the writer's framing around the files, which are read from their
	// spool as the body is sent: the framing's pieces, in order, between them.
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	mw.WriteField("model", model)
	for _, f := range req.Extra {
		var s string
		if json.Unmarshal(f.Value, &s) != nil {
			s = string(f.Value) // a JSON client's number or boolean, as its text
		}
		mw.WriteField(f.Name, s)
	}
	var parts []io.Reader
	n := int64(0)
	for _, f := range req.Files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": f.Field, "filename": f.Filename}))
		h.Set("Content-Type", f.ContentType)
		mw.CreatePart(h)
		frame := bytes.Clone(head.Bytes())
		head.Reset()
		parts = append(parts, bytes.NewReader(frame), f.Open())
		n += int64(len(frame)) + f.Size
	}
	mw.Close()
	parts = append(parts, bytes.NewReader(bytes.Clone(head.Bytes())))
	n += int64(head.Len())
	return mw.FormDataContentType(), io.MultiReader(parts...), n
}

// passStream is a passed answer as an llm.Stream of EvData events. Not safe for concurrent
// use, except Close.
type passStream struct {
	o origin
	transport.Body
	rc      io.Reader
	ct      string
	started bool
	wait    func()
	err     error // sticky: io.EOF after the answer's end
}

// BeforeWait implements llm.Waiter: f runs before each read of the body.
func (s *passStream) BeforeWait(f func()) { s.wait = f; s.OnWait(f) }

// Recv implements llm.Stream.
func (s *passStream) Recv() (llm.Event, error) {
	if s.err != nil {
		return llm.Event{}, s.err
	}
	ev := llm.Event{Type: llm.EvData}
	if !s.started {
		ev.Field = s.ct
	}
	if mt, _, _ := mime.ParseMediaType(s.ct); !s.started && mt == "application/json" {
		s.started = true
		data, err := s.ReadAll()
		if err == nil {
			if we := parseErrorBody(data); we.Message != "" {
				err = s.o.inStreamError(we) // an error with status 200: the upstream failed
			}
		}
		if err != nil {
			return llm.Event{}, s.end(err)
		}
		s.end(io.EOF)
		ev.Raw = data
		return ev, nil
	}
	if s.wait != nil {
		s.wait()
	}
	buf := make([]byte, passChunk) // each event owns its bytes: the caller may keep them
	n, err := 0, error(nil)
	for n == 0 && err == nil {
		n, err = s.rc.Read(buf)
	}
	switch {
	case err == io.EOF:
		s.end(io.EOF)
		if n == 0 && s.started {
			return llm.Event{}, io.EOF
		}
	case err != nil:
		if e := s.Stopped(); e != nil {
			return llm.Event{}, s.end(e)
		}
		return llm.Event{}, s.end(&llm.Error{Kind: llm.Truncated, Message: s.o.name + ": the answer was cut: " + err.Error(), Err: err})
	}
	s.started = true
	ev.Raw = buf[:n]
	return ev, nil
}

// end ends the stream with err, sticky, and lets go of the body (drained after a complete
// answer).
func (s *passStream) end(err error) error {
	s.err = err
	s.End(err)
	return err
}

var (
	_ llm.Stream = (*passStream)(nil)
	_ llm.Waiter = (*passStream)(nil)
)
