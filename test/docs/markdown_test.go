package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// page is one Markdown file: its path relative to the repository's root, and its lines.
type page struct {
	name  string
	lines []string
}

// block is one fenced code block of a page.
type block struct {
	file string
	line int    // of the opening fence, from 1; the body starts on the next line
	info string // the info string's first word: yaml, sh, ...
	prev string // the line directly above the fence, trimmed
	body []string
}

// root is the repository's root, absolute: go test runs a package's tests in its directory,
// and startDefault leaves it.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// pages reads README.md and every docs/**/*.md, sorted by name.
func pages(t *testing.T, dir string) []page {
	t.Helper()
	names := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(dir, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var ps []page
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, parse(n, string(data)))
	}
	return ps
}

func parse(name, text string) page {
	return page{name: name, lines: strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")}
}

// fence matches an opening or closing fence, indented (inside a list item) or not.
var fence = regexp.MustCompile("^(\\s*)(`{3,}|~{3,})\\s*([^`\\s]*)")

// blocks returns the fenced code blocks of p (CommonMark: a fence closes with at least as many
// of the same character and nothing else; an unclosed block runs to the end).
func (p page) blocks() []block {
	var out []block
	for i := 0; i < len(p.lines); i++ {
		m := fence.FindStringSubmatch(p.lines[i])
		if m == nil {
			continue
		}
		b := block{file: p.name, line: i + 1, info: strings.ToLower(m[3])}
		if i > 0 {
			b.prev = strings.TrimSpace(p.lines[i-1])
		}
		indent, marker := m[1], m[2]
		for i++; i < len(p.lines); i++ {
			l := p.lines[i]
			if t := strings.TrimSpace(l); strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
				break
			}
			b.body = append(b.body, strings.TrimPrefix(l, indent))
		}
		out = append(out, b)
	}
	return out
}

// prose returns p's lines with the fenced blocks blanked, so that a link or heading in an
// example is not taken for one of the page.
func (p page) prose() []string {
	out := slices.Clone(p.lines)
	for _, b := range p.blocks() {
		for i := b.line - 1; i < min(b.line+len(b.body)+1, len(out)); i++ {
			out[i] = ""
		}
	}
	return out
}

func TestBlocks(t *testing.T) {
	p := parse("x.md", "intro\n<!-- doc-test: not-gateway-config -->\n```yaml\nservices: {}\n```\n\n"+
		"- a list item:\n\n  ```sh\n  curl x\n  ```\n````md\n```yaml\ninner: 1\n```\n````\n")
	bs := p.blocks()
	if len(bs) != 3 {
		t.Fatalf("got %d blocks %+v, want 3", len(bs), bs)
	}
	want := []block{
		{file: "x.md", line: 3, info: "yaml", prev: "<!-- doc-test: not-gateway-config -->", body: []string{"services: {}"}},
		{file: "x.md", line: 9, info: "sh", body: []string{"curl x"}},
		{file: "x.md", line: 12, info: "md", prev: "```", body: []string{"```yaml", "inner: 1", "```"}},
	}
	for i, w := range want {
		if g := bs[i]; g.line != w.line || g.info != w.info || g.prev != w.prev || !slices.Equal(g.body, w.body) {
			t.Errorf("block %d: got %+v, want %+v", i, g, w)
		}
	}
	if got := p.prose(); got[3] != "" || got[0] != "intro" || got[6] != "- a list item:" {
		t.Errorf("prose: got %q, want the blocks blanked and the rest kept", got)
	}
}
