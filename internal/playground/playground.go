// Package playground is the gateway's web page (GET /): a chat on the AI SDK UI message
// stream with its activity (steps, tool calls, progress, restarts), and the live statistics
// of /admin/stats, in plain JavaScript embedded in the binary, so that `make run` needs no
// npm and the page reaches no network but the gateway's own origin. It decides what the
// browser gets: the files, their types and caching, and the Content-Security-Policy that
// keeps model output from ever running as code (the page renders it as text only).
package playground

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path of the page's files; the page itself is "/".
const Prefix = "/playground/"

//go:embed static
var static embed.FS

// CSP is the page's Content-Security-Policy: scripts, styles and calls from the gateway's
// own origin only (no inline code, no CDN, no font or script from elsewhere), no plugins,
// no framing, and Trusted Types with no policy, so that a string can never reach an HTML
// sink such as innerHTML even by mistake (the browser throws instead).
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
}

// file is one embedded file, ready to serve.
type file struct {
	name  string
	body  []byte
	ctype string
	etag  string
}

// files are the embedded files by URL path, read once: immutable afterwards.
var files = func() map[string]*file {
	m := map[string]*file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ctype, ok := types[path.Ext(p)]
		if !ok {
			panic("playground: no content type for " + p) // TestFiles rules it out
		}
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(p, "static/")
		m[Prefix+name] = &file{name: name, body: b, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("playground: " + err.Error())
	}
	m["/"] = m[Prefix+"index.html"]
	return m
}()

// Handler serves the page at "/" and its files under Prefix (GET and HEAD). Files are
// revalidated on every load (no-cache with an ETag: a 304 costs a round trip on loopback or
// a LAN), so a new gateway binary never leaves a browser with a stale page.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := files[r.URL.Path]
		if f == nil || r.URL.Path == Prefix+"index.html" {
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
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
	})
}
