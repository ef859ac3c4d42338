package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/playground"
	"github.com/sluice-gw/sluice/internal/playground/sitetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func serve(t *testing.T, h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestFiles(t *testing.T) {
	h := New(Options{}).Handler()
	tests := []struct {
		name, method, path string
		status             int
		ctype              string
	}{
		{"the page", "GET", "/console/", 200, "text/html; charset=utf-8"},
		{"the page, HEAD", "HEAD", "/console/", 200, "text/html; charset=utf-8"},
		{"a script", "GET", "/console/app.js", 200, "text/javascript; charset=utf-8"},
		{"the styles", "GET", "/console/console.css", 200, "text/css; charset=utf-8"},
		{"unknown", "GET", "/console/nope.js", 404, ""},
		{"the page under its file name", "GET", "/console/index.html", 404, ""},
		{"the prefix without its slash", "GET", "/console", 301, ""},
		{"a file is not posted to", "POST", "/console/app.js", 405, ""},
		{"no session PUT", "PUT", "/console/session", 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(t, h, tt.method, tt.path)
			if w.Code != tt.status {
				t.Fatalf("got %d, want %d", w.Code, tt.status)
			}
			if tt.status == 301 {
				if got := w.Header().Get("Location"); got != Prefix {
					t.Errorf("Location: got %q, want %q", got, Prefix)
				}
			}
			if tt.status != 200 {
				return
			}
			hd := w.Header()
			for k, want := range map[string]string{"Content-Type": tt.ctype, "Content-Security-Policy": playground.CSP,
				"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
				"Referrer-Policy": "no-referrer"} {
				if got := hd.Get(k); got != want {
					t.Errorf("%s: got %q, want %q", k, got, want)
				}
			}
			if w304 := serve(t, h, "GET", tt.path, "If-None-Match", hd.Get("ETag")); w304.Code != http.StatusNotModified {
				t.Errorf("revalidation: got %d, want 304", w304.Code)
			}
		})
	}
}

// TestNoHTMLSinks keeps captured content out of HTML: no script may write markup from a
// string (Trusted Types would make the browser throw; this finds it before a browser does),
// and the page has no inline script, style or handler for the CSP to refuse, and names no
// other origin.
func TestNoHTMLSinks(t *testing.T) { sitetest.NoSinks(t, static, "static", "/console/app.js") }

// TestReferences checks that every file the page and its modules name is served: the
// console's own, and the site's shared ones under /playground/.
func TestReferences(t *testing.T) {
	ref := regexp.MustCompile(`(?:href|src)="(/(?:console|playground)/[^"]+)"|from '(\./[^']+|/[^']+)'`)
	h := New(Options{}).Handler()
	pg := playground.Handler()
	for _, path := range site.Paths() {
		for _, m := range ref.FindAllStringSubmatch(string(site.Body(path)), -1) {
			want := m[1]
			if want == "" {
				want = m[2]
			}
			if strings.HasPrefix(want, "./") {
				want = Prefix + want[2:]
			}
			from := h
			if strings.HasPrefix(want, playground.Prefix) {
				from = pg
			}
			if w := serve(t, from, "GET", want); w.Code != 200 {
				t.Errorf("%s names %s, which answers %d", path, want, w.Code)
			}
		}
	}
}

// TestSharedNavigation: the console and the playground link each other, one site.
func TestSharedNavigation(t *testing.T) {
	con := serve(t, New(Options{}).Handler(), "GET", "/console/").Body.String()
	pg := serve(t, playground.Handler(), "GET", "/").Body.String()
	for name, page := range map[string]string{"console": con, "playground": pg} {
		for _, want := range []string{`<nav class="site"`, `href="/"`, `href="/console/"`, `href="/playground/style.css"`} {
			if !strings.Contains(page, want) {
				t.Errorf("the %s page lacks %s", name, want)
			}
		}
	}
	b, _ := io.ReadAll(serve(t, New(Options{}).Handler(), "GET", "/console/app.js").Body)
	if !strings.Contains(string(b), "import") {
		t.Error("app.js is not a module")
	}
}
