package docs

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$`)
	// Inline links and images, [text](target "title"), reference definitions, [x]: target,
	// and the src and href of HTML tags.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)`)
	htmlAttr   = regexp.MustCompile(`\b(?:src|href)\s*=\s*"([^"]*)"`)
	htmlAnchor = regexp.MustCompile(`<a\s[^>]*\b(?:id|name)\s*=\s*"([^"]+)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	htmlTag    = regexp.MustCompile(`<[^>]*>`)
)

// slug is GitHub's anchor for a heading's text: the rendered text (code spans' content, links'
// text, no HTML or emphasis markers), lower-cased, every space a '-', and every character but
// letters, digits, '-' and '_' dropped.
func slug(text string) string {
	text = inlineLink.ReplaceAllStringFunc(text, func(l string) string {
		return l[strings.Index(l, "[")+1 : strings.LastIndex(l, "](")]
	})
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of p's headings, a repeated one suffixed -1, -2, ... as GitHub
// does, and those of its HTML <a id> or <a name> tags.
func (p page) anchors() map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, l := range p.prose() {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := count[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

// link is a link of a page, at a line.
type link struct {
	line   int
	target string
}

// links returns the links of p's prose, code spans left out: a link in an example is an
// example.
func (p page) links() []link {
	var out []link
	for i, l := range p.prose() {
		l = blankCode(l)
		var ms [][]string
		ms = append(ms, inlineLink.FindAllStringSubmatch(l, -1)...)
		ms = append(ms, refDef.FindAllStringSubmatch(l, -1)...)
		ms = append(ms, htmlAttr.FindAllStringSubmatch(l, -1)...)
		for _, m := range ms {
			out = append(out, link{line: i + 1, target: m[1]})
		}
	}
	return out
}

// blankCode blanks the code spans of a line: a run of backticks up to the next run of as many.
func blankCode(l string) string {
	b := []byte(l)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 1
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		run := strings.Repeat("`", n)
		end := -1
		for j := i + n; j < len(b); {
			k := strings.Index(string(b[j:]), run)
			if k < 0 {
				break
			}
			if j+k+n == len(b) || b[j+k+n] != '`' {
				end = j + k
				break
			}
			j += k + n
			for j < len(b) && b[j] == '`' {
				j++
			}
		}
		if end < 0 {
			i += n
			continue
		}
		for k := i; k < end+n; k++ {
			b[k] = ' '
		}
		i = end + n
	}
	return string(b)
}

// checkLinks returns the relative links of ps that do not resolve: a file or directory that
// does not exist (dir is the repository's root), an #anchor no heading of its page has.
func checkLinks(dir string, ps []page) []string {
	byName := map[string]page{}
	for _, p := range ps {
		byName[p.name] = p
	}
	anchors := map[string]map[string]bool{}
	var errs []string
	for _, p := range ps {
		for _, l := range p.links() {
			if l.target == "" || scheme.MatchString(l.target) || strings.HasPrefix(l.target, "//") {
				continue
			}
			file, frag, _ := strings.Cut(l.target, "#")
			name := p.name
			if file != "" {
				unescaped, err := url.PathUnescape(file)
				if err != nil {
					unescaped = file
				}
				name = path.Clean(path.Join(path.Dir(p.name), unescaped))
				if strings.HasPrefix(name, "../") || strings.HasPrefix(file, "/") {
					errs = append(errs, fmt.Sprintf("%s:%d: %s leaves the repository (a link must be relative, within it)", p.name, l.line, l.target))
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
					errs = append(errs, fmt.Sprintf("%s:%d: %s: no file %s", p.name, l.line, l.target, name))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(name, ".md") {
				continue
			}
			target, ok := byName[name]
			if !ok {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s:%d: %s: %v", p.name, l.line, l.target, err))
					continue
				}
				target = parse(name, string(data))
			}
			if anchors[name] == nil {
				anchors[name] = target.anchors()
			}
			if !anchors[name][frag] {
				errs = append(errs, fmt.Sprintf("%s:%d: %s: %s has no heading with the anchor #%s%s", p.name, l.line, l.target, name, frag, nearest(frag, anchors[name])))
			}
		}
	}
	return errs
}

// nearest suggests the anchor of the page that shares the longest prefix with a broken one.
func nearest(frag string, as map[string]bool) string {
	best, n := "", 3
	for a := range as {
		k := 0
		for k < min(len(a), len(frag)) && a[k] == frag[k] {
			k++
		}
		if k > n || (k == n && best != "" && a < best) {
			best, n = a, k
		}
	}
	if best == "" {
		return ""
	}
	return " (#" + best + "?)"
}

// TestLinks resolves every relative link and #anchor of README.md and docs/**/*.md.
func TestLinks(t *testing.T) {
	dir := root(t)
	ps := pages(t, dir)
	n := 0
	for _, p := range ps {
		n += len(p.links())
	}
	if n == 0 {
		t.Fatal("found no link: the extractor is broken")
	}
	for _, e := range checkLinks(dir, ps) {
		t.Error(e)
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Keys, teams and limits", "keys-teams-and-limits"},
		{"`POST /v1/responses`", "post-v1responses"},
		{"Running in production (compose, Kubernetes)", "running-in-production-compose-kubernetes"},
		{"max_body_bytes: a limit", "max_body_bytes-a-limit"},
		{"What's new?", "whats-new"},
		{"A [link](x.md) and <b>bold</b>", "a-link-and-bold"},
		{"Fallbacks — first-event rule", "fallbacks--first-event-rule"},
		{"Échelle 10,000", "échelle-10000"},
	}
	for _, tt := range tests {
		if got := slug(tt.in); got != tt.want {
			t.Errorf("slug(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckLinks plants broken links and anchors, so TestLinks is known to catch them.
func TestCheckLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	ps := []page{
		parse("README.md", "# Sluice\n## Setup\n## Setup\n[ok](docs/a.md#usage) [dup](#setup-1) [web](https://x.test/#y)\n"+
			"[gone](docs/none.md) [bad anchor](docs/a.md#usages) `[code](nowhere.md)`\n```md\n[example](nowhere.md)\n```\n"+
			"[top](#setup-2)\n[ref]: docs/a.md#nope\n<img src=\"docs/missing.svg\">\n"),
		parse("docs/a.md", "# A\n## Usage\n[back](../README.md#sluice) [out](../../etc/passwd) [self](#a)\n"),
	}
	for _, p := range ps {
		if err := os.WriteFile(filepath.Join(dir, p.name), []byte(strings.Join(p.lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := checkLinks(dir, ps)
	want := []string{
		"README.md:5: docs/none.md: no file docs/none.md",
		"README.md:5: docs/a.md#usages: docs/a.md has no heading with the anchor #usages (#usage?)",
		"README.md:9: #setup-2: README.md has no heading with the anchor #setup-2 (#setup-1?)",
		"README.md:10: docs/a.md#nope: docs/a.md has no heading with the anchor #nope",
		"README.md:11: docs/missing.svg: no file docs/missing.svg",
		"docs/a.md:3: ../../etc/passwd leaves the repository (a link must be relative, within it)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
