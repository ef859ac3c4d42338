package redact

import "unicode/utf8"

// status is a detector's answer at one offset.
type status uint8

const (
	miss status = iota // no match opens here
	more               // undecided until more bytes arrive
	hit                // a match opens here
)

// view is what a detector sees while it decides at one offset: the buffer up to end. A
// detector may read only below end; reading at end means "more" unless final, in which case
// the text (or the candidate's cap) ends there. Deciding only from bytes below end is what
// makes every decision independent of how the text was split.
type view struct {
	b      []byte
	end    int
	final  bool // nothing at or after end will be seen by this decision
	capped bool // end is the candidate's MaxMatchBytes cap, not the end of the text
}

// at returns the byte at k, or miss at the final end, or more.
func (v *view) at(k int) (byte, status) {
	if k < v.end {
		return v.b[k], hit
	}
	if v.final {
		return 0, miss
	}
	return 0, more
}

// lit reports whether the text at k starts with s; fold compares ASCII letters without case
// (s must then be lower case).
func (v *view) lit(k int, s string, fold bool) status {
	for j := 0; j < len(s); j++ {
		c, st := v.at(k + j)
		if st != hit {
			return st
		}
		if fold && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[j] {
			return miss
		}
	}
	return hit
}

// span returns the end of the run of bytes in set starting at k. It reports more when the run
// reaches the end of what is buffered and more bytes could extend it.
func (v *view) span(k int, set *byteSet) (int, status) {
	for k < v.end && set[v.b[k]] {
		k++
	}
	if k == v.end && !v.final {
		return k, more
	}
	return k, hit
}

// atCap reports whether a run that stopped at k stopped because of the cap.
func (v *view) atCap(k int) bool { return v.capped && k == v.end }

// in reports whether the byte at k is in set: hit if so, miss if not or at the final end.
func (v *view) in(k int, set *byteSet) status {
	c, st := v.at(k)
	if st != hit {
		return st
	}
	if set[c] {
		return hit
	}
	return miss
}

// byteSet is a set of bytes, built from a spec such as "A-Za-z0-9_-".
type byteSet [256]bool

func newSet(spec string) *byteSet {
	var s byteSet
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for c := int(spec[i]); c <= int(spec[i+2]); c++ {
				s[c] = true
			}
			i += 2
			continue
		}
		s[spec[i]] = true
	}
	return &s
}

var (
	alnum    = newSet("A-Za-z0-9")
	digits   = newSet("0-9")
	upperNum = newSet("A-Z0-9")
	spaceTab = newSet(" \t")
)

// isSpace reports ASCII whitespace: the only bytes that end a run. Unicode spaces (U+3000)
// count as run text, which is why long runs are also cut at MaxRunBytes.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// runeStart backs k off to the start of the rune containing it, at most three bytes and never
// below lo, so a cut never splits a UTF-8 sequence.
func runeStart(b []byte, k, lo int) int {
	for j := 0; j < utf8.UTFMax-1 && k > lo && k < len(b) && !utf8.RuneStart(b[k]); j++ {
		k--
	}
	return k
}

func hasDigit(b []byte) bool {
	for _, c := range b {
		if '0' <= c && c <= '9' {
			return true
		}
	}
	return false
}
