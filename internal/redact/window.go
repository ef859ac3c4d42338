package redact

import "unicode/utf8"

// Window redacts one stream of text pieces. Write returns what is decided and may be shown;
// Flush ends the text and returns the rest. Released text is final and never splits a UTF-8
// sequence (given valid UTF-8 input). The concatenation of all releases equals
// Rules.Redact(whole text) for every split.
//
// A Window is not safe for concurrent use. After Flush it is empty and may be reused for a
// new text; Counts keeps accumulating.
type Window struct {
	r *Rules

	buf []byte // text from one byte of decided context on
	pos int    // start of the undecided text in buf

	out []byte // decided output not yet released
	rel int    // out[:rel] ends at a release point
	run int    // bytes of out since the last release point

	// Operator patterns without a literal prefix: either the next match [fs, fe) by fname,
	// or fs < 0 and no match starts before fp.
	fp, fs, fe int
	fname      string

	stalled bool // the last decide stopped on an undecided candidate
	retryAt int  // ... which cannot resolve before buf is this long or a non-alnum byte arrives

	counts map[string]int
	v      view // reused by every decision: detectors take it by pointer
}

// empty is what a nil *Rules streams with: no detectors, the same release rules.
var empty = &Rules{window: 128, maxMatch: 4096, maxRun: 4096}

func init() {
	for c := 0; c < 256; c++ {
		if alnum[c] {
			empty.class[c] = clsAlnum
		}
	}
}

// NewWindow returns a window over r; a nil r masks nothing.
func (r *Rules) NewWindow() *Window {
	if r == nil {
		r = empty
	}
	return &Window{r: r, fs: -1}
}

// Write adds the next piece of text and returns the text that is now decided and ends at a
// release point (whitespace, or MaxRunBytes of a run), possibly "".
func (w *Window) Write(piece string) string {
	w.buf = append(w.buf, piece...)
	if w.stalled && len(w.buf) < w.retryAt && allAlnum(piece) {
		// Letters and digits only extend the open candidate's body. Deciding later
		// changes when, never what, is decided (every decision is a function of the
		// text), and the run is held until a separator anyway. Skipping keeps Write
		// linear instead of rescanning the candidate on every byte.
		return ""
	}
	w.decide(false)
	return w.release(false)
}

// Flush ends the text: everything is decided and released, and the window is reset.
func (w *Window) Flush() string {
	w.decide(true)
	s := w.release(true)
	w.buf, w.pos, w.fp, w.fs, w.stalled = w.buf[:0], 0, 0, -1, false
	return s
}

// Counts returns the number of masks so far per detector name (see RedactCount).
func (w *Window) Counts() map[string]int {
	m := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		m[k] = v
	}
	return m
}

func allAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !alnum[s[i]] {
			return false
		}
	}
	return true
}

// decide moves pos forward over everything that can be decided, appending the output. k is
// the decision cursor; text in [pos, k) is decided verbatim and emitted in one go.
func (w *Window) decide(eof bool) {
	r, b, pos := w.r, w.buf, w.pos
	n, k := len(b), pos
	w.stalled = false
	for k < n {
		end, fs := n, -1
		if r.free != nil {
			// The pattern windows advance on their own, from the start of the text, so
			// where they fall never depends on the detectors; a pattern match that starts
			// inside a mask is dropped.
			for w.freeNext(eof); w.fs >= 0 && w.fs < k; w.freeNext(eof) {
				w.fp, w.fs = w.fe, -1
			}
			if fs = w.fs; fs >= 0 {
				end = fs + 1 // a detector opening at fs takes priority over the pattern
			} else if end = w.fp; end < k {
				end = k
			}
		}
		i := r.next(b, k, end)
		if i < end {
			st, ms, me, d := r.matchAt(&w.v, b, i, eof)
			if st == more {
				k = i
				w.stalled, w.retryAt = true, i+r.maxMatch+1
				break
			}
			if st == hit {
				w.emit(b[pos:ms])
				w.mask(d.name)
				pos, k = me, me
				continue
			}
			if i != fs {
				k = i + 1
				continue
			}
		}
		if fs >= 0 {
			w.emit(b[pos:fs])
			w.mask(w.fname)
			pos, k, w.fp, w.fs = w.fe, w.fe, w.fe, -1
			continue
		}
		k = end
		if end < n { // the pattern window is incomplete
			w.stalled, w.retryAt = true, w.fp+r.window+1
			break
		}
	}
	w.emit(b[pos:k])
	w.pos = k
	w.compact()
}

// freeNext advances the search for operator patterns without a literal prefix (see free).
func (w *Window) freeNext(eof bool) {
	if w.fs >= 0 {
		return
	}
	r, b := w.r, w.buf
	n, step := len(b), r.window/2
	for w.fp < n {
		end := w.fp + r.window
		if end >= n {
			if !eof {
				return // the byte at end is needed too, to cut on a rune boundary
			}
			end = n
		} else {
			end = runeStart(b, end, w.fp+1)
		}
		if s, e, name, ok := r.free.find(b[w.fp:end]); ok && s < step {
			w.fs, w.fe, w.fname = w.fp+s, w.fp+e, name
			return
		}
		next := w.fp + step
		if next >= n {
			w.fp = n
			return
		}
		w.fp = runeStart(b, next, w.fp+1)
	}
}

// emit appends decided text and moves the release point to its last whitespace, or cuts a
// long run at MaxRunBytes on a rune boundary.
func (w *Window) emit(t []byte) {
	if len(t) == 0 {
		return
	}
	w.out = append(w.out, t...)
	k := len(t) - 1
	for k >= 0 && !isSpace(t[k]) {
		k--
	}
	if k >= 0 {
		w.rel = len(w.out) - (len(t) - k - 1)
		w.run = len(t) - k - 1
	} else {
		w.run += len(t)
	}
	w.cutRun()
}

func (w *Window) mask(name string) {
	if w.counts == nil {
		w.counts = map[string]int{}
	}
	w.counts[name]++
	w.out = append(w.out, "[REDACTED:"...)
	w.out = append(w.out, name...)
	w.out = append(w.out, ']')
	w.run += len(name) + 11
	w.cutRun()
}

func (w *Window) cutRun() {
	if w.run < w.r.maxRun {
		return
	}
	c := len(w.out)
	for j := 1; j < utf8.UTFMax && c-j > w.rel; j++ {
		if utf8.RuneStart(w.out[c-j]) {
			if !utf8.FullRune(w.out[c-j:]) {
				c -= j // a rune still arriving stays with the next release
			}
			break
		}
	}
	w.rel, w.run = c, len(w.out)-c
}

func (w *Window) release(all bool) string {
	if all {
		w.rel = len(w.out)
	}
	if w.rel == 0 {
		return ""
	}
	s := string(w.out[:w.rel])
	w.out = w.out[:copy(w.out, w.out[w.rel:])]
	w.rel = 0
	if all {
		w.run = 0
	}
	return s
}

// compact drops decided text, keeping one byte of context for word boundaries.
func (w *Window) compact() {
	keep := w.pos
	if w.r.free != nil {
		if w.fs >= 0 && w.fs < keep {
			keep = w.fs
		} else if w.fs < 0 && w.fp < keep {
			keep = w.fp
		}
	}
	drop := keep - 1
	if drop < 1024 && drop < len(w.buf)/2 || drop <= 0 {
		return
	}
	w.buf = w.buf[:copy(w.buf, w.buf[drop:])]
	w.pos -= drop
	if w.fp -= drop; w.fp < 0 {
		w.fp = 0 // not used while a match is pending
	}
	if w.fs >= 0 {
		w.fs -= drop
		w.fe -= drop
	}
	if w.stalled {
		w.retryAt -= drop
	}
}
