package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/llm"
)

// maxFields caps the form's fields other than the file, together (purpose, expires_after).
const maxFields = 64 << 10

// form is an upload's multipart body as it is read: the fields before the file, then the
// file part, whose bytes are still to come.
type form struct {
	mr     *multipart.Reader
	fields [][2]string
	file   *multipart.Part
	size   int // of the fields read so far
}

// clientError is a fault of the client's body (truncated, malformed, too large): the
// upload's answer whatever the host said, since the host only saw it cut.
type clientError struct{ err *llm.Error }

func (e clientError) Error() string { return e.err.Error() }
func (e clientError) Unwrap() error { return e.err }

// readForm reads an upload's fields up to its file part; a field named model sets *model
// (it is the gateway's, not sent on). A body without a file, or malformed, is a 400.
func readForm(mr *multipart.Reader, model *string) (*form, error) {
	f := &form{mr: mr}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, invalid("file", "The upload has no 'file' part.")
		}
		if err != nil {
			return nil, malformed(err)
		}
		if p.FormName() == "file" {
			f.file = p
			return f, nil
		}
		v, err := f.field(p)
		if err != nil {
			return nil, err
		}
		if p.FormName() == "model" {
			*model = v
			continue
		}
		f.fields = append(f.fields, [2]string{p.FormName(), v})
	}
}

// field reads the value of p, a field other than the file, within maxFields.
func (f *form) field(p *multipart.Part) (string, error) {
	if p.FormName() == "" || p.FileName() != "" {
		return "", invalid("file", "The upload has a part other than a named field or its one 'file'.")
	}
	b, err := io.ReadAll(io.LimitReader(p, int64(maxFields-f.size+1)))
	if err != nil {
		return "", malformed(err)
	}
	if f.size += len(b); f.size > maxFields {
		return "", invalid("file", "The upload's fields other than 'file' are too large.")
	}
	return string(b), nil
}

// copy writes the form to mw as the host gets it: the fields read, the file (at most limit
// bytes) and the fields after it; it returns the file's size. A fault of the client's
// body is a clientError; a failed write (the host stopped reading) is returned as it is.
func (f *form) copy(mw *multipart.Writer, limit int64) (int64, error) {
	for _, kv := range f.fields {
		if err := mw.WriteField(kv[0], kv[1]); err != nil {
			return 0, err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, quoteEscaper.Replace(f.file.FileName())))
	ct := f.file.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	fw, err := mw.CreatePart(h)
	if err != nil {
		return 0, err
	}
	src := &readFault{r: io.LimitReader(f.file, limit+1)}
	n, err := io.Copy(fw, src)
	switch {
	case src.err != nil:
		return n, malformed(src.err)
	case n > limit:
		return n, clientError{tooLarge(limit)}
	case err != nil:
		return n, err
	}
	for {
		p, err := f.mr.NextPart()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, malformed(err)
		}
		if p.FormName() == "file" {
			return n, clientError{invalid("file", "The upload has more than one 'file' part.")}
		}
		v, err := f.field(p)
		if err != nil {
			return n, asClient(err)
		}
		if p.FormName() != "model" {
			if err := mw.WriteField(p.FormName(), v); err != nil {
				return n, err
			}
		}
	}
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

// readFault keeps the error of its reader's read, the client's body.
type readFault struct {
	r   io.Reader
	err error
}

func (r *readFault) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// asClient is err, an *llm.Error or a clientError, as a clientError.
func asClient(err error) error {
	if le, ok := err.(*llm.Error); ok {
		return clientError{le}
	}
	return err
}

// malformed is the 400 of a multipart body that cannot be read (cut, not multipart).
func malformed(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return clientError{tooLarge(mbe.Limit)}
	}
	return clientError{invalid("file", "The upload's multipart body is malformed or was cut short.")}
}

// tooLarge is the 413 of an upload over limit bytes.
func tooLarge(limit int64) *llm.Error {
	return &llm.Error{Kind: llm.TooLarge, Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Param: "file",
		Code: "file_too_large", Message: fmt.Sprintf("The file is larger than the gateway's limit of %d bytes.", limit)}
}

// maxUpload is the largest upload to model's host.
func (s *Service) maxUpload(model string) int64 {
	if s.MaxUpload != nil {
		if n := s.MaxUpload(model); n > 0 {
			return n
		}
	}
	return DefaultMaxUpload
}

// upload passes a file upload through, streamed: the multipart body is read part by part
// and written again as the host's request, the file's bytes as they come, so the gateway
// never holds the file. The host is the model's the request names (the query's model,
// the X-Sluice-Model header, or a model field before the file), else the service's
// Model's. Over the limit: 413; not multipart, cut or malformed: 400.
func (s *Service) upload(ctx context.Context, c Call) error {
	mt, params, err := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return invalid("file", "An upload's Content-Type is multipart/form-data with a boundary.")
	}
	model := modelOf(c.R, s.Model)
	f, err := readForm(multipart.NewReader(c.R.Body, params["boundary"]), &model)
	if err != nil {
		return unwrapClient(err)
	}
	if model == "" {
		return invalid("model", "Name the model whose target keeps the file: ?model=, the X-Sluice-Model header or a 'model' field "+
			"before the file (no default is configured).")
	}
	limit := s.maxUpload(model)
	if c.R.ContentLength > limit+maxFields+4096 {
		return tooLarge(limit)
	}
	p, err := s.Hosts.For(ctx, model, false)
	if err != nil {
		return err
	}
	if err := c.T.Admit(ctx, admit.Ask{Model: model, Embeddings: true}); err != nil { // Embeddings: no answer tokens to reserve
		return err
	}
	c.Rec.Model, c.Rec.Target = model, p.Name
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	type copied struct {
		n   int64
		err error
	}
	done := make(chan copied, 1)
	go func() {
		n, err := f.copy(mw, limit)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
		done <- copied{n, err}
	}()
	a, err := p.Host.Object(ctx, llm.ObjectCall{Method: http.MethodPost, Path: "files", ContentType: mw.FormDataContentType(), Body: pr, Length: -1})
	pr.CloseWithError(errors.New("the upload's host stopped reading")) // the copy ends
	res := <-done
	var ce clientError
	if errors.As(res.err, &ce) {
		if a != nil {
			a.Body.Close()
		}
		return ce.err
	}
	if err != nil {
		return err
	}
	owner := s.owner(c, model, p.Target)
	owner.Bytes = res.n
	return s.relayJSON(ctx, c, a, rewriter{s: s, name: p.Name, prefix: FilePrefix, owner: owner, created: true, base: baseURL(c.R)})
}

// unwrapClient is err without its clientError wrapper.
func unwrapClient(err error) error {
	var ce clientError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// owner is the record of an object the caller makes for model, priced at target.
func (s *Service) owner(c Call, model, target string) Record {
	rec := Record{Key: c.In.Key, Model: model, Target: target}
	if k := c.T.Key(); k != nil {
		rec.Team = k.Team
	}
	return rec
}
