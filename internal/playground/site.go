package playground

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// CSP is the pages' Content-Security-Policy: scripts, styles and calls from the gateway's
// own origin only (no inline code, no CDN, no font or script from elsewhere), no plugins,
// no framing, and Trusted Types with no policy, so that a string can never reach an HTML
// sink such as innerHTML even by mistake (the browser throws instead). The playground and
// the console (internal/console) share it: one site, one policy.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// types are the files' content types, by extension: a fixed table rather than
// mime.TypeByExtension, which reads the machine's mime.types and differs between hosts.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
}

// file is one embedded file, ready to serve.
type file struct {
	name  string
	body  []byte
	ctype string
	etag  string
}

// Site is a folder of embedded files served under one URL prefix, with its index.html at an
// index path (and not under its own name). Immutable once made: safe for concurrent use.
type Site struct {
	prefix string
	files  map[string]*file // by URL path
}

// NewSite reads the files of dir in fsys once, to be served under prefix ("/console/"), the
// folder's index.html at index ("/" or the prefix itself). It panics on a file of a type
// it has no Content-Type for: the files are the binary's own, so that is a build mistake a
// test finds.
func NewSite(fsys fs.FS, dir, prefix, index string) *Site {
	s := &Site{prefix: prefix, files: map[string]*file{}}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		ctype, ok := types[path.Ext(p)]
		if !ok {
			panic("playground: no content type for " + p)
		}
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(p, dir+"/")
		s.files[prefix+name] = &file{name: name, body: b, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("playground: " + err.Error())
	}
	if f := s.files[prefix+"index.html"]; f != nil {
		s.files[index] = f
		delete(s.files, prefix+"index.html") // one URL per page
	}
	return s
}

// Has reports whether the site serves urlPath.
func (s *Site) Has(urlPath string) bool { return s.files[urlPath] != nil }

// Paths are the URL paths the site serves, in no order.
func (s *Site) Paths() []string {
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	return out
}

// Body is the content of the file at urlPath, nil when none; not to be modified.
func (s *Site) Body(urlPath string) []byte {
	if f := s.files[urlPath]; f != nil {
		return f.body
	}
	return nil
}

// ServeHTTP serves the files (GET and HEAD). Files are revalidated on every load (no-cache
// with an ETag: a 304 costs a round trip on loopback or a LAN), so a new gateway binary
// never leaves a browser with a stale page.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := s.files[r.URL.Path]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	SecurityHeaders(h)
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}

// SecurityHeaders sets the site's policy on an answer: the CSP, no type sniffing, no
// referrer, no framing, and a browsing context of its own.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
