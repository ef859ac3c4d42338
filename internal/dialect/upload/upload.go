// Package upload decodes the multipart/form-data requests of the OpenAI wires that take a
// file (audio transcriptions, image edits: issue 48) as they arrive, never whole in memory:
// each file part is spooled to a temporary file, which every attempt of the chain reads
// again from its start (llm.FilePart), so that the chain may fall back before the first
// byte of the answer as it does for a JSON request. The spool is unlinked as soon as it is
// made: nothing is left on disk whatever happens, and its space is freed when the request
// closes it (llm.Request.CloseFiles), or when the runtime collects it. Its size is bounded by
// the body's limit (limits.max_upload_bytes).
package upload

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Form is what a wire's multipart body may hold.
type Form struct {
	// Files are the fields that carry a file; a field ending in "[]" may repeat.
	Files []string
	// Field checks a text field's value (nil: any); model is the wire's to read.
	Field func(name, value string) error
	// Required are the fields a body must hold (text or file), model aside.
	Required []string
	// Model is the model of a body that names none ("": model is required).
	Model string
}

// maxText caps a text field, and maxParts the parts of a body: a prompt is at most 32000
// characters (OpenAI's image edit), and no form of the API has a hundred fields.
const (
	maxText  = 256 << 10
	maxParts = 1000
)

// Read decodes the multipart body of in (in.Body, its content type in.Header) as f says:
// the model, the text fields in order as JSON strings in Extra, and the files in Files. A
// body that is not multipart/form-data, is cut or malformed, lacks a required field, or
// holds a field f refuses is a 400 in OpenAI's shape; a body over the limit is the 413 of
// in.Body, a client that left its Canceled error.
func Read(in dialect.Input, f Form) (model string, req *llm.Request, err error) {
	mt, params, perr := mime.ParseMediaType(in.Header("Content-Type"))
	if perr != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", nil, oai.Invalid("", "Invalid Content-Type header (%s): expected multipart/form-data with a boundary.", in.Header("Content-Type"))
	}
	if in.Body == nil {
		return "", nil, &llm.Error{Kind: llm.Internal, Message: "upload: the edge handed no body"}
	}
	r := &reader{f: f, req: &llm.Request{}, model: f.Model}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	mr := multipart.NewReader(in.Body, params["boundary"])
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, bodyErr(err)
		}
		if n == maxParts {
			return "", nil, oai.Invalid("", "Invalid multipart body: more than %d parts.", maxParts)
		}
		if err := r.part(p); err != nil {
			return "", nil, err
		}
	}
	if r.model == "" {
		return "", nil, oai.Invalid("model", "Missing required parameter: 'model'.")
	}
	for _, name := range f.Required {
		if !slices.ContainsFunc(r.req.Extra, func(x llm.Field) bool { return x.Name == name }) &&
			!slices.ContainsFunc(r.req.Files, func(x llm.FilePart) bool { return strings.TrimSuffix(x.Field, "[]") == name }) {
			return "", nil, oai.Invalid(name, "Missing required parameter: '%s'.", name)
		}
	}
	return r.model, r.req, nil
}

// reader is one body's decoding: what it read so far, and its spool.
type reader struct {
	f     Form
	req   *llm.Request
	model string
	spool *os.File
	size  int64
}

// part reads one part: a file to the spool, a text field into Extra (or the model).
func (r *reader) part(p *multipart.Part) error {
	defer p.Close()
	name := p.FormName()
	if name == "" {
		return oai.Invalid("", "Invalid multipart body: a part has no form-data name.")
	}
	if p.FileName() != "" || slices.Contains(r.f.Files, name) {
		return r.file(p, name)
	}
	b, err := io.ReadAll(io.LimitReader(p, maxText+1))
	if err != nil {
		return bodyErr(err)
	}
	if len(b) > maxText {
		return oai.Invalid(name, "Invalid '%s': longer than %d bytes.", name, maxText)
	}
	v := string(b)
	if name == "model" {
		if v == "" {
			return oai.Invalid("model", "Invalid 'model': empty string.")
		}
		r.model = v
		return nil
	}
	if !strings.HasSuffix(name, "[]") && slices.ContainsFunc(r.req.Extra, func(x llm.Field) bool { return x.Name == name }) {
		return oai.Invalid(name, "Invalid multipart body: '%s' is given twice.", name)
	}
	if r.f.Field != nil {
		if err := r.f.Field(name, v); err != nil {
			return err
		}
	}
	raw, _ := json.Marshal(v) // invalid UTF-8 becomes U+FFFD, as a JSON client's could not send it
	r.req.Extra = append(r.req.Extra, llm.Field{Name: name, Value: raw})
	return nil
}

// file spools a file part.
func (r *reader) file(p *multipart.Part, name string) error {
	if !slices.Contains(r.f.Files, name) {
		return oai.Invalid(name, "Invalid multipart body: '%s' is not a file field of this endpoint.", name)
	}
	if !strings.HasSuffix(name, "[]") && slices.ContainsFunc(r.req.Files, func(x llm.FilePart) bool { return x.Field == name }) {
		return oai.Invalid(name, "Invalid multipart body: '%s' is given twice.", name)
	}
	if r.spool == nil {
		f, err := os.CreateTemp("", "sluice-upload-*")
		if err != nil {
			return &llm.Error{Kind: llm.Internal, Message: "upload: no spool file", Err: err}
		}
		os.Remove(f.Name()) // unlinked: its space lives as long as the open file
		r.spool = f
	}
	n, err := io.Copy(r.spool, p)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) { // the spool's write, not the body's read
			return &llm.Error{Kind: llm.Internal, Message: "upload: spooling the file failed", Err: err}
		}
		return bodyErr(err)
	}
	if n == 0 {
		return oai.Invalid(name, "Invalid '%s': the file is empty.", name)
	}
	ct := p.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	r.req.Files = append(r.req.Files, llm.NewFilePart(name, p.FileName(), ct, r.spool, r.size, n))
	r.size += n
	return nil
}

// close drops the spool of a body that was refused.
func (r *reader) close() {
	if r.spool != nil {
		r.spool.Close()
	}
}

// bodyErr is the error of a read of the body: the limit's or the client's (an *llm.Error of
// the edge's reader), else a malformed or cut body, the client's 400.
func bodyErr(err error) error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	return oai.Invalid("", "Invalid multipart body: %s.", strings.TrimPrefix(err.Error(), "multipart: "))
}
