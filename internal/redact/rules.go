package redact

import (
	"fmt"
	"sort"
	"sync"
)

// Pattern is an operator regex (Go syntax). Each match is masked as [REDACTED:<Name>]. A
// pattern whose matches all start with a literal (re.LiteralPrefix) is a candidate opened by
// that literal; one without is searched in a sliding window of WindowBytes. Either way a match
// is at most WindowBytes long.
type Pattern struct {
	Name  string
	Regex string
}

// Config selects and tunes the rules; the zero value means the built-in detectors without PII
// and the default sizes.
type Config struct {
	Detectors     map[string]bool // per built-in detector name (or "pii"): false switches it off; absent = default
	PII           bool            // turns on the PII detectors (email, phone, credit_card, iban)
	WindowBytes   int             // default 128: the hold-back for operator regexes
	MaxMatchBytes int             // default 4096: a candidate this long is masked whole
	MaxRunBytes   int             // default 4096: a run without whitespace is released at this size
	Patterns      []Pattern
	Terms         []string // literal whole-word terms, ASCII case-insensitive, masked as [REDACTED:term]

	// The gateway's own secrets (secrets.go), masked whatever Detectors says. Secrets are
	// literal values (its admin token, provider keys, passwords), each masked wherever it
	// appears, also URL-escaped, as [REDACTED:secret]; one shorter than MinSecret or longer
	// than MaxMatchBytes is not. KeyHashes are the hex SHA-256 of keys it knows only by
	// hash: a run of 16 to 512 letters, digits, _ + / - (and '=' padding) whose hash is one
	// is masked as [REDACTED:secret]. KeyPrefix starts the keys it makes: the prefix and 32
	// or more letters, digits, _ or - are masked as [REDACTED:sluice_key], wherever the key
	// was made.
	Secrets   []string
	KeyHashes []string
	KeyPrefix string
}

// Rules is a compiled rule set. It is immutable and safe for concurrent use.
type Rules struct {
	first    [256][]*detector // detectors by the byte that can open them, in priority order
	own      [256][]*detector // the gateway's own secrets' detectors among them (secrets.go)
	hasOwn   bool             // some own detector exists: masks are widened over own secrets
	hashed   *detector        // the file's keys by hash (secrets.go), asked where hashStart says
	class    [256]uint8
	pair     [256][4]uint64 // bit b of pair[a]: some detector can open on a followed by b
	free     *free
	window   int
	maxMatch int
	maxRun   int
}

const (
	clsAlnum = 1 << iota
	clsWord  // opens a detector that needs a word boundary before it
	clsAny   // opens a detector that does not
)

var piiNames = map[string]bool{"email": true, "phone": true, "credit_card": true, "iban": true}

// DetectorNames returns the built-in detector names, sorted.
func DetectorNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, d := range append(keyDetectors(), piiDetectors()...) {
		if !seen[d.name] {
			seen[d.name] = true
			names = append(names, d.name)
		}
	}
	sort.Strings(names)
	return names
}

// Compile checks c and builds its rules. Errors name the bad detector or pattern.
func Compile(c Config) (*Rules, error) {
	r := &Rules{window: c.WindowBytes, maxMatch: c.MaxMatchBytes, maxRun: c.MaxRunBytes}
	for _, s := range []struct {
		name string
		v    *int
		def  int
	}{{"window_bytes", &r.window, 128}, {"max_match_bytes", &r.maxMatch, 4096}, {"max_run_bytes", &r.maxRun, 4096}} {
		if *s.v == 0 {
			*s.v = s.def
		}
		if *s.v < 16 {
			return nil, fmt.Errorf("redact: %s must be at least 16, got %d", s.name, *s.v)
		}
	}
	if c.KeyPrefix != "" && len(c.KeyPrefix) < 2 {
		return nil, fmt.Errorf("redact: key prefix %q: want at least 2 bytes", c.KeyPrefix)
	}
	known := map[string]bool{"pii": true}
	for _, n := range DetectorNames() {
		known[n] = true
	}
	for n := range c.Detectors {
		if !known[n] {
			return nil, fmt.Errorf("redact: unknown detector %q", n)
		}
	}
	pii := c.PII
	if on, ok := c.Detectors["pii"]; ok {
		pii = on
	}
	ds, hashed := secretDetectors(c) // first: at one offset, the gateway's own secrets win
	nOwn := len(ds)
	if r.hashed = hashed; hashed != nil {
		r.hasOwn = true
	}
	for _, d := range append(keyDetectors(), piiDetectors()...) {
		on := !piiNames[d.name] || pii
		if v, ok := c.Detectors[d.name]; ok {
			on = v
		}
		if on {
			ds = append(ds, d)
		}
	}
	ds = append(ds, termDetectors(c.Terms)...)
	var frees []Pattern
	for _, p := range c.Patterns {
		cp, err := compilePattern(p)
		if err != nil {
			return nil, err
		}
		if cp.prefix == "" {
			frees = append(frees, p)
			continue
		}
		ds = append(ds, cp.detector(r.window))
	}
	r.free = newFree(frees)
	for c := 0; c < 256; c++ {
		if alnum[c] {
			r.class[c] |= clsAlnum
		}
	}
	for k := range ds {
		d := &ds[k]
		for j := 0; j < len(d.first); j++ {
			c := d.first[j]
			r.first[c] = append(r.first[c], d)
			if k < nOwn {
				r.own[c], r.hasOwn = append(r.own[c], d), true
			}
			if d.next == "" {
				r.pair[c] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			}
			for x := 0; x < len(d.next); x++ {
				r.pair[c][d.next[x]>>6] |= 1 << (d.next[x] & 63)
			}
			if d.word {
				r.class[c] |= clsWord
			} else {
				r.class[c] |= clsAny
			}
		}
	}
	return r, nil
}

var (
	defaultOnce  sync.Once
	defaultRules *Rules
)

// Default returns the built-in detectors without PII, with default sizes. The rules are
// shared.
func Default() *Rules {
	defaultOnce.Do(func() {
		r, err := Compile(Config{})
		if err != nil {
			panic(err) // the built-in configuration is constant
		}
		defaultRules = r
	})
	return defaultRules
}

// Redact returns text with every match masked. It is the streaming algorithm run on text as
// one piece, so it equals what any Window releases for any split of text. A nil *Rules
// returns text unchanged.
func (r *Rules) Redact(text string) string {
	out, _ := r.RedactCount(text)
	return out
}

// RedactCount is Redact plus the number of masks per detector name ("term" for terms, the
// pattern's name for operator patterns). The map is nil when nothing was masked.
//
// It runs a pooled window's Write and Flush on text and keeps their output whole instead of
// releasing it twice; when nothing was masked that output is text itself (emitted text is
// copied verbatim), which is returned without a copy: a log line's values cost no allocation.
func (r *Rules) RedactCount(text string) (string, map[string]int) {
	if r == nil {
		return text, nil
	}
	w := oneShot.Get().(*Window)
	*w = Window{r: r, fs: -1, buf: append(w.buf[:0], text...), out: w.out[:0]}
	w.decide(false)
	w.decide(true)
	out, counts := text, w.counts
	if counts != nil {
		out = string(w.out)
	}
	if cap(w.buf)+cap(w.out) <= maxPooled {
		*w = Window{buf: w.buf, out: w.out}
		oneShot.Put(w)
	}
	return out, counts
}

// oneShot are the windows of RedactCount; maxPooled bounds the buffers a pooled one keeps.
var oneShot = sync.Pool{New: func() any { return new(Window) }}

const maxPooled = 64 << 10

// next returns the first offset in b[pos:end] where a detector could open, or end. It is
// the prefilter that keeps the window fast: one table lookup per byte, the rest of a word
// skipped in a tight loop, and a second-byte check before any detector runs.
func (r *Rules) next(b []byte, pos, end int) int {
	cls, pair := &r.class, &r.pair
	prevAlnum := pos > 0 && cls[b[pos-1]]&clsAlnum != 0
	last := len(b) - 1
	for k := pos; k < end; {
		if r.hashed != nil && hashStart(b, k) {
			return k
		}
		c := cls[b[k]]
		// Word triggers count only after a byte that is not a letter or digit.
		if c&clsAny != 0 || c&clsWord != 0 && !prevAlnum {
			if k == last {
				return k
			}
			if x := b[k+1]; pair[b[k]][x>>6]&(1<<(x&63)) != 0 {
				return k
			}
		}
		k++
		if prevAlnum = c&clsAlnum != 0; prevAlnum {
			// The rest of a word cannot open a word trigger: skip it, up to a byte that
			// opens a detector anywhere (an operator pattern, a secret of the gateway).
			for k < end && cls[b[k]]&(clsAlnum|clsAny) == clsAlnum {
				k++
			}
		}
	}
	return end
}

// matchAt runs the detectors opened by b[i] in priority order; the first that does not miss
// decides. n is how much of b is text; eof reports that the text ends there.
func (r *Rules) matchAt(v *view, b []byte, i int, eof bool) (st status, ms, me int, d *detector) {
	*v = view{b: b, end: len(b), final: eof}
	// The cap is "capped" only when the byte at the cap is buffered too, so a cut can be
	// moved back to a rune boundary with the same answer for every split.
	if c := i + r.maxMatch; c < len(b) {
		v.end, v.final, v.capped = c, true, true
	}
	prevAlnum := i > 0 && alnum[b[i-1]]
	if d := r.hashed; d != nil && hashStart(b, i) {
		if st, ms, me := d.match(v, i); st != miss {
			if st == hit {
				st, me = r.widen(v, ms, me)
			}
			return st, ms, me, d
		}
	}
	for _, d := range r.first[b[i]] {
		if d.word && prevAlnum {
			continue
		}
		if st, ms, me := d.match(v, i); st != miss {
			if st == hit && r.hasOwn {
				st, me = r.widen(v, ms, me)
			}
			return st, ms, me, d
		}
	}
	return miss, 0, 0, nil
}

// widen extends a mask [ms, me) over the whole of any of the gateway's own secrets that
// starts inside it: a detector that opened earlier (a Bearer token, a URL's password) may
// stop at a byte of the secret it does not take, and the rest of the secret must not be
// shown. It answers more while such a secret is undecided.
func (r *Rules) widen(v *view, ms, me int) (status, int) {
	end := me
	for p := ms; p < me; p++ {
		if d := r.hashed; d != nil && hashStart(v.b, p) {
			if st, _, e := d.match(v, p); st == more {
				return more, 0
			} else if st == hit && e > end {
				end = e
			}
		}
		for _, d := range r.own[v.b[p]] {
			if d.word && p > 0 && alnum[v.b[p-1]] {
				continue
			}
			st, _, e := d.match(v, p)
			if st == more {
				return more, 0
			}
			if st == hit && e > end {
				end = e
			}
		}
	}
	return hit, end
}
