package redact

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// termDetectors match operator terms as whole words, ASCII case-insensitively. Longer terms
// come first so "project falcon" wins over "project" at the same offset.
func termDetectors(terms []string) []detector {
	var ts []string
	for _, t := range terms {
		if t = strings.TrimSpace(t); t != "" {
			ts = append(ts, t)
		}
	}
	sort.SliceStable(ts, func(a, b int) bool { return len(ts[a]) > len(ts[b]) })
	var ds []detector
	for _, t := range ts {
		low := strings.ToLower(t)
		first := string(low[0])
		if up := strings.ToUpper(first); up != first {
			first += up
		}
		edge := alnum[low[len(low)-1]]
		next := ""
		if len(low) > 1 {
			next = low[1:2] + strings.ToUpper(low[1:2])
		}
		ds = append(ds, detector{name: "term", first: first, word: alnum[low[0]], next: next,
			match: func(v *view, i int) (status, int, int) {
				if st := v.lit(i, low, true); st != hit {
					return st, 0, 0
				}
				e := i + len(low)
				if edge {
					switch v.in(e, alnum) {
					case more:
						return more, 0, 0
					case hit:
						return miss, 0, 0
					}
				}
				return hit, i, e
			}})
	}
	return ds
}

// pattern is a compiled operator regex.
type pattern struct {
	name   string
	prefix string         // literal every match starts with; "" if none
	anch   *regexp.Regexp // the regex anchored at the start of its window
}

func compilePattern(p Pattern) (pattern, error) {
	if p.Name == "" || strings.ContainsAny(p.Name, "[] \t\n") {
		return pattern{}, fmt.Errorf("redact: pattern %q: name must be non-empty, without spaces or brackets", p.Name)
	}
	re, err := regexp.Compile(p.Regex)
	if err != nil {
		return pattern{}, fmt.Errorf("redact: pattern %q: %w", p.Name, err)
	}
	if re.MatchString("") {
		return pattern{}, fmt.Errorf("redact: pattern %q: matches the empty string", p.Name)
	}
	prefix, _ := re.LiteralPrefix()
	return pattern{name: p.Name, prefix: prefix, anch: regexp.MustCompile(`^(?:` + p.Regex + `)`)}, nil
}

// detector turns a pattern with a literal prefix into a candidate opened by that prefix. Its
// match is searched within WindowBytes of the prefix: the candidate resolves once that much
// text (or the end of text) has arrived.
func (p pattern) detector(windowBytes int) detector {
	var next string
	if len(p.prefix) > 1 {
		next = p.prefix[1:2]
	}
	return detector{name: p.name, first: p.prefix[:1], next: next, match: func(v *view, i int) (status, int, int) {
		if st := v.lit(i, p.prefix, false); st != hit {
			return st, 0, 0
		}
		e := i + windowBytes
		if e >= v.end {
			if !v.final {
				return more, 0, 0 // the byte at e is needed too, to cut on a rune boundary
			}
			e = v.end
		} else {
			e = runeStart(v.b, e, i+1)
		}
		loc := p.anch.FindIndex(v.b[i:e])
		if loc == nil || loc[1] == 0 {
			return miss, 0, 0
		}
		return hit, i, i + loc[1]
	}}
}

// free holds the operator patterns without a literal prefix, searched together. They cannot
// be opened by a prefix, so the window searches fixed windows of WindowBytes that advance by
// half a window: a match that starts in the first half of a window is taken. Matches up to
// WindowBytes/2 are therefore always found; the window holds back WindowBytes.
type free struct {
	re    *regexp.Regexp // (p1)|(p2)|...
	group []int          // submatch index of each pattern's wrapper
	names []string
}

func newFree(ps []Pattern) *free {
	if len(ps) == 0 {
		return nil
	}
	f := &free{}
	var alt []string
	g := 1
	for _, p := range ps {
		alt = append(alt, "("+p.Regex+")")
		f.group = append(f.group, g)
		f.names = append(f.names, p.Name)
		g += 1 + regexp.MustCompile(p.Regex).NumSubexp()
	}
	f.re = regexp.MustCompile(strings.Join(alt, "|"))
	return f
}

// find returns the leftmost non-empty match in t and the pattern that made it.
func (f *free) find(t []byte) (s, e int, name string, ok bool) {
	for off := 0; off <= len(t); {
		loc := f.re.FindSubmatchIndex(t[off:])
		if loc == nil {
			return 0, 0, "", false
		}
		if loc[1] > loc[0] {
			for k, g := range f.group {
				if loc[2*g] >= 0 {
					return off + loc[0], off + loc[1], f.names[k], true
				}
			}
		}
		off += loc[0] + 1 // skip an empty match, deterministically
	}
	return 0, 0, "", false
}
