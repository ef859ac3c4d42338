package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode/utf8"
)

// MinCredential is both the shortest value Credentials masks and the length of the runs it
// matches: any run of MinCredential or more consecutive bytes of a credential (or of one of
// its encodings) is masked, so an upstream that quotes a prefix, a suffix or the middle of a
// key ("Incorrect API key provided: sk-proj-abcd****wxyz") leaks fewer than 8 of its bytes in
// a row. A value shorter than this cannot be told from ordinary text and is not masked.
const MinCredential = 8

// CredentialMask replaces each masked run, typed like the detectors' masks.
const CredentialMask = "[REDACTED:credential]"

// Credentials masks the literal credentials the gateway holds (its providers' keys, the
// header and query values it adds) wherever a run of MinCredential bytes of one of them
// appears in a text. It is built once from the configuration, is immutable and safe for
// concurrent use. It is meant for error text an upstream wrote, not for the hot path: Mask
// is one table lookup per byte.
type Credentials struct {
	// grams holds every MinCredential-byte window of every form of every credential, as
	// the 8 bytes of a uint64, so a rolling window over a text finds them in one lookup.
	grams map[uint64]struct{}
}

// NewCredentials returns the masker of values and their usual encodings: a value with an
// auth scheme ("Bearer x", "Basic x") also without it, a Basic value's decoded user:password
// and password, and each of those URL-query- and path-escaped and in base64 (standard and
// URL alphabets, at each of the three alignments a value can have inside a longer encoded
// text, as in Basic user:key). Values shorter than MinCredential are left out.
func NewCredentials(values ...string) *Credentials {
	c := &Credentials{grams: map[uint64]struct{}{}}
	inMask := map[uint64]bool{}
	for i := 0; i+MinCredential <= len(CredentialMask); i++ {
		inMask[gram(CredentialMask[i:])] = true
	}
	for _, v := range values {
		for _, f := range forms(v) {
			for i := 0; i+MinCredential <= len(f); i++ {
				// A window of the mask itself is never matched: masked text must stay
				// masked, and masking must end.
				if g := gram(f[i:]); !inMask[g] {
					c.grams[g] = struct{}{}
				}
			}
		}
	}
	return c
}

// gram is the first MinCredential bytes of s as a uint64, first byte highest, the value the
// rolling window of Mask holds after reading them.
func gram(s string) uint64 {
	var g uint64
	for i := range MinCredential {
		g = g<<8 | uint64(s[i])
	}
	return g
}

// forms is v and the encodings of it an upstream may quote.
func forms(v string) []string {
	if len(v) < MinCredential {
		return nil
	}
	base := []string{v}
	if scheme, rest, ok := strings.Cut(v, " "); ok && rest != "" && !strings.ContainsAny(scheme, "\t:=") {
		base = append(base, rest) // Authorization-style "Scheme credentials"
		if strings.EqualFold(scheme, "basic") {
			if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err == nil {
				base = append(base, string(b))
				if _, pass, ok := strings.Cut(string(b), ":"); ok {
					base = append(base, pass)
				}
			}
		}
	}
	out := base
	for _, b := range base {
		if q := url.QueryEscape(b); q != b {
			out = append(out, q)
		}
		if p := url.PathEscape(b); p != b {
			out = append(out, p)
		}
		out = append(out, base64Runs(b)...)
	}
	return out
}

// base64Runs are the base64 characters that depend on v's bytes alone, wherever v sits in a
// longer encoded text: for each of the three offsets v can start at within a 3-byte group,
// the encoding of the groups v fills entirely.
func base64Runs(v string) []string {
	var out []string
	for off := range 3 {
		x := strings.Repeat("\x00", off) + v
		first, last := 0, len(x)/3 // whole groups of x; the first holds padding when off > 0
		if off > 0 {
			first = 1
		}
		if 4*(last-first) < MinCredential {
			continue
		}
		g := []byte(x[3*first : 3*last])
		out = append(out, base64.StdEncoding.EncodeToString(g))
		if u := base64.URLEncoding.EncodeToString(g); u != out[len(out)-1] {
			out = append(out, u)
		}
	}
	return out
}

// Mask returns text with every run of MinCredential or more bytes of a credential replaced by
// CredentialMask; overlapping and adjacent runs become one mask, widened to whole UTF-8
// sequences. Text holding no such run is returned unchanged. A nil *Credentials masks
// nothing.
func (c *Credentials) Mask(text string) string {
	if c == nil || len(c.grams) == 0 {
		return text
	}
	// A mask written next to other text can form, with its neighbours, a window of a
	// credential that contains mask bytes; another pass masks that too. Each pass that
	// changes the text leaves fewer bytes outside masks, so this would end, but a
	// credential made of the mask's own characters could take one pass per few bytes:
	// past maxPasses the whole text is masked instead, which keeps Mask linear. Real
	// credentials take two passes: one that masks, one that finds nothing.
	for range maxPasses {
		out, changed := c.pass(text)
		if !changed {
			return out
		}
		text = out
	}
	return CredentialMask
}

// maxPasses bounds the passes of Mask.
const maxPasses = 4

// pass masks the runs found in one scan of s.
func (c *Credentials) pass(s string) (string, bool) {
	if len(s) < MinCredential {
		return s, false
	}
	var spans [][2]int
	var w uint64
	for i := 0; i < len(s); i++ {
		w = w<<8 | uint64(s[i])
		if i < MinCredential-1 {
			continue
		}
		if _, ok := c.grams[w]; !ok {
			continue
		}
		spans = appendSpan(spans, i+1-MinCredential, i+1)
	}
	if len(spans) == 0 {
		return s, false
	}
	// Widen each run to whole runes and to whole masks it touches, so a mask is never cut.
	var masks [][2]int
	for k := 0; ; {
		j := strings.Index(s[k:], CredentialMask)
		if j < 0 {
			break
		}
		masks = append(masks, [2]int{k + j, k + j + len(CredentialMask)})
		k += j + len(CredentialMask)
	}
	var wide [][2]int
	mi := 0 // spans and masks are both sorted: one sweep
	for _, sp := range spans {
		lo, hi := sp[0], sp[1]
		for n := 0; n < utf8.UTFMax-1 && lo > 0 && !utf8.RuneStart(s[lo]); n++ {
			lo--
		}
		for n := 0; n < utf8.UTFMax-1 && hi < len(s) && !utf8.RuneStart(s[hi]); n++ {
			hi++
		}
		for mi < len(masks) && masks[mi][1] <= lo {
			mi++
		}
		for ; mi < len(masks) && masks[mi][0] < hi; mi++ {
			lo, hi = min(lo, masks[mi][0]), max(hi, masks[mi][1])
		}
		wide = appendSpan(wide, lo, hi)
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range wide {
		b.WriteString(s[last:sp[0]])
		b.WriteString(CredentialMask)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// appendSpan adds [lo, hi) to spans, sorted by lo, merging it into the last span when they
// overlap or touch.
func appendSpan(spans [][2]int, lo, hi int) [][2]int {
	if n := len(spans); n > 0 && lo <= spans[n-1][1] {
		spans[n-1][1] = max(spans[n-1][1], hi)
		return spans
	}
	return append(spans, [2]int{lo, hi})
}

// Scrubber masks what must never leave the gateway in text an upstream wrote (an error
// message, code or type): first the literal credentials, then what the built-in detectors
// find (keys of a known shape, tokens, private keys). Immutable and safe for concurrent use.
type Scrubber struct {
	creds *Credentials
	rules *Rules
}

// NewScrubber masks creds, then what rules find; nil rules means Default().
func NewScrubber(creds *Credentials, rules *Rules) *Scrubber {
	if rules == nil {
		rules = Default()
	}
	return &Scrubber{creds: creds, rules: rules}
}

// Scrub returns text with the credentials and the detectors' matches masked.
func (s *Scrubber) Scrub(text string) string {
	return s.rules.Redact(s.creds.Mask(text))
}
