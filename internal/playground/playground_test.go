package playground

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/sluice-gw/sluice/internal/playground/sitetest"
)

func get(t *testing.T, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, r)
	return w
}

func TestFiles(t *testing.T) {
	tests := []struct {
		name, path string
		status     int
		ctype      string
	}{
		{"the page", "/", 200, "text/html; charset=utf-8"},
		{"a script", "/playground/app.js", 200, "text/javascript; charset=utf-8"},
		{"the styles", "/playground/style.css", 200, "text/css; charset=utf-8"},
		{"the icon", "/playground/favicon.svg", 200, "image/svg+xml"},
		{"unknown", "/playground/nope.js", 404, ""},
		{"the page under its file name", "/playground/index.html", 404, ""},
		{"a directory", "/playground/", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := get(t, tt.path)
			if w.Code != tt.status {
				t.Fatalf("got %d, want %d", w.Code, tt.status)
			}
			if tt.status != 200 {
				return
			}
			h := w.Header()
			for k, want := range map[string]string{"Content-Type": tt.ctype, "Content-Security-Policy": CSP,
				"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"} {
				if got := h.Get(k); got != want {
					t.Errorf("%s: got %q, want %q", k, got, want)
				}
			}
			if w304 := get(t, tt.path, "If-None-Match", h.Get("ETag")); w304.Code != http.StatusNotModified {
				t.Errorf("revalidation: got %d, want 304", w304.Code)
			}
		})
	}
}

// TestNoHTMLSinks keeps model output out of HTML: no script may write markup from a string
// (the CSP's Trusted Types would make the browser throw; this finds it before a browser does),
// and the page has no inline script, style or handler for the CSP to refuse.
func TestNoHTMLSinks(t *testing.T) { sitetest.NoSinks(t, static, "static", "/playground/app.js") }

// TestReferences checks that every file the page and its modules name is embedded.
func TestReferences(t *testing.T) {
	ref := regexp.MustCompile(`(?:href|src)="(/playground/[^"]+)"|from '\./([^']+)'`)
	for _, path := range site.Paths() {
		for _, m := range ref.FindAllStringSubmatch(string(site.Body(path)), -1) {
			want := m[1]
			if want == "" {
				want = Prefix + m[2]
			}
			if !site.Has(want) {
				t.Errorf("%s names %s, which is not embedded", path, want)
			}
		}
	}
}
