package llm

import "io"

// FilePart is one file of a multipart request (Request.Files): its form field, file name
// and media type as the client sent them, and its bytes, which Open reads from the start
// for each attempt. Safe for concurrent use.
type FilePart struct {
	Field, Filename, ContentType string
	Size                         int64
	at                           io.ReaderAt
	off                          int64
}

// NewFilePart is the part of size bytes at off in at (a spool file).
func NewFilePart(field, filename, contentType string, at io.ReaderAt, off, size int64) FilePart {
	return FilePart{Field: field, Filename: filename, ContentType: contentType, Size: size, at: at, off: off}
}

// Open is a reader of the part's bytes, from the first.
func (f FilePart) Open() io.Reader { return io.NewSectionReader(f.at, f.off, f.Size) }

// CloseFiles closes what r's files are read from (their spool file), when it can be closed:
// after the request's last attempt. Their space is freed then, not at the end of the process.
func (r *Request) CloseFiles() {
	for i, f := range r.Files {
		if c, ok := f.at.(io.Closer); ok && (i == 0 || r.Files[i-1].at != f.at) {
			c.Close()
		}
	}
}
