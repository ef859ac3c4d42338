// Package sitetest holds the checks every page of the gateway's site shares (the playground's
// and the console's), for their tests: what a browser would refuse under the site's CSP and
// Trusted Types, found before a browser does.
package sitetest

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// sinks are the ways a script could write markup or code from a string, or load code: model
// output and captured content must only ever become text.
var sinks = regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*['"]on|srcdoc|\.on[a-z]+\s*=\s*['"]|import\(`)

// script is a page's script tags.
var script = regexp.MustCompile(`<script(?:\s[^>]*)?>`)

// NoSinks walks dir of fsys: no script writes markup or code from a string or names another
// origin (comments aside), and each page has exactly one script, src (its module), and no
// inline script, style or handler, nor any external resource.
func NoSinks(t *testing.T, fsys fs.FS, dir, src string) {
	t.Helper()
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".js"):
			for _, line := range strings.Split(string(b), "\n") {
				code, _, _ := strings.Cut(line, "//")
				if sinks.MatchString(code) {
					t.Errorf("%s: an HTML or code sink: %s", p, strings.TrimSpace(line))
				}
				if strings.Contains(code, "https://") || (strings.Contains(code, "http://") && !strings.Contains(code, "http://www.w3.org/2000/svg")) {
					t.Errorf("%s: another origin: %s", p, strings.TrimSpace(line))
				}
			}
		case strings.HasSuffix(p, ".html"):
			html := string(b)
			if m := script.FindAllString(html, -1); len(m) != 1 || !strings.Contains(m[0], `src="`+src+`"`) {
				t.Errorf("%s: want one script, %s, got %q", p, src, m)
			}
			for _, bad := range []string{"<style", " style=", " onclick=", " onload=", "http://", "https://"} {
				if strings.Contains(html, bad) {
					t.Errorf("%s contains %q: inline code or an external resource", p, bad)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
