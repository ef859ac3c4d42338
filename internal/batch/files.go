package batch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Purposes are the purposes a file may be uploaded with (OpenAI's).
var Purposes = []string{"assistants", "batch", "fine-tune", "vision", "user_data", "evals"}

// upload stores a multipart upload's file part chunk by chunk as it arrives (never the
// whole file in memory), then its record; a failed upload leaves no chunk behind.
func (h *Host) upload(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	mt, params, err := mime.ParseMediaType(call.ContentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" || call.Body == nil {
		return nil, invalid("", "Invalid Content-Type header (%s), expected multipart/form-data with a boundary.", call.ContentType)
	}
	max := h.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	id := newID("file-")
	w := &chunkWriter{ctx: ctx, s: h.Store, file: id}
	var purpose, filename string
	seen := false
	mr := multipart.NewReader(call.Body, params["boundary"])
	fail := func(err error) (*llm.ObjectAnswer, error) {
		_ = h.Store.DropChunks(context.WithoutCancel(ctx), id, w.n+1)
		return nil, err
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(invalid("", "The multipart body could not be read: %v.", err))
		}
		switch p.FormName() {
		case "purpose":
			b, err := io.ReadAll(io.LimitReader(p, 65))
			if err != nil {
				return fail(invalid("purpose", "The multipart body could not be read: %v.", err))
			}
			purpose = string(b)
		case "file":
			if seen {
				return fail(invalid("file", "Only one file may be uploaded at a time."))
			}
			seen, filename = true, p.FileName()
			n, err := io.Copy(w, io.LimitReader(p, max+1))
			switch {
			case errors.Is(err, errBody):
				return fail(invalid("file", "The multipart body could not be read: %v.", errors.Unwrap(err)))
			case err != nil:
				return fail(err)
			case n > max:
				return fail(&llm.Error{Kind: llm.TooLarge, Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
					Param: "file", Message: "File is too large: the limit of this model's files is " + strconv.FormatInt(max, 10) + " bytes."})
			}
			if err := w.flush(); err != nil {
				return fail(err)
			}
		default:
			if _, err := io.Copy(io.Discard, io.LimitReader(p, 1<<16)); err != nil {
				return fail(invalid("", "The multipart body could not be read: %v.", err))
			}
		}
	}
	switch {
	case !seen:
		return fail(invalid("file", "Missing required parameter: 'file'."))
	case purpose == "":
		return fail(invalid("purpose", "Missing required parameter: 'purpose'."))
	case !slices.Contains(Purposes, purpose):
		return fail(invalid("purpose", "Invalid value for 'purpose': '%.64s'. Supported values are: %q.", purpose, Purposes))
	}
	if filename == "" {
		filename = "file"
	}
	f := fileRec{Owner: owner(ctx), Alias: h.Alias, Chunks: w.n, File: fileObject{ID: id, Object: "file", Bytes: w.size,
		CreatedAt: h.now().Unix(), Filename: filename, Purpose: purpose, Status: "processed"}}
	if err := h.put(ctx, &f); err != nil {
		return fail(err)
	}
	return answer(f.File)
}

// put records a file whose chunks are stored, and lists it.
func (h *Host) put(ctx context.Context, f *fileRec) error {
	rec, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := h.Store.Put(ctx, f.File.ID, rec); err != nil {
		return err
	}
	return h.Store.Index(ctx, "files", f.File.ID, f.File.CreatedAt)
}

// errBody marks a failure to read the client's body, as opposed to the store's.
var errBody = errors.New("reading the upload")

// bodyError is a failure to read the client's body (errors.Is errBody; Unwrap: the cause).
type bodyError struct{ err error }

func (e *bodyError) Error() string        { return e.err.Error() }
func (e *bodyError) Unwrap() error        { return e.err }
func (e *bodyError) Is(target error) bool { return target == errBody }

// chunkWriter stores what is written to it as a file's chunks of ChunkSize, holding at
// most one chunk. Not safe for concurrent use.
type chunkWriter struct {
	ctx  context.Context
	s    Store
	file string
	buf  []byte
	n    int   // chunks stored
	size int64 // bytes written
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, ChunkSize)
		}
		k := min(len(b), ChunkSize-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		b, written, w.size = b[k:], written+k, w.size+int64(k)
		if len(w.buf) == ChunkSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// ReadFrom reads r into the writer, so that io.Copy tells r's failures (errBody) from the
// store's.
func (w *chunkWriter) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	tmp := make([]byte, 32<<10)
	for {
		k, err := r.Read(tmp)
		if k > 0 {
			if _, werr := w.Write(tmp[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, &bodyError{err}
		}
	}
}

// flush stores the chunk held, if any.
func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if err := w.s.PutChunk(w.ctx, w.file, w.n, w.buf); err != nil {
		return err
	}
	w.n++
	w.buf = w.buf[:0]
	return nil
}

// chunkReader reads the bytes off to end of a file's content, one chunk at a time.
type chunkReader struct {
	ctx      context.Context
	s        Store
	file     string
	off, end int64
	buf      []byte
}

func newChunkReader(ctx context.Context, s Store, file string, off, end int64) *chunkReader {
	return &chunkReader{ctx: ctx, s: s, file: file, off: off, end: end}
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.off >= r.end {
			return 0, io.EOF
		}
		c, err := r.s.Chunk(r.ctx, r.file, int(r.off/ChunkSize))
		if err != nil {
			return 0, err
		}
		skip := r.off % ChunkSize
		if int64(len(c)) <= skip {
			return 0, io.ErrUnexpectedEOF // a chunk expired or was dropped under the reader
		}
		r.buf = c[skip:min(int64(len(c)), skip+r.end-r.off)]
	}
	n := copy(p, r.buf)
	r.buf, r.off = r.buf[n:], r.off+int64(n)
	return n, nil
}
