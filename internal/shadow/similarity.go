package shadow

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Similarity is how alike two answers are, 0 (no word in common) to 1 (the same words): the
// Jaccard index of their word sets, |A ∩ B| / |A ∪ B|, where a word is a run of letters and
// digits, compared without case. Order, repetition, spacing and punctuation do not count, so
// a paraphrase scores below a reformatting of the same text; two empty answers score 1, an
// empty and a non-empty one 0. Two equal texts cost nothing; else each text is read once
// into one set of both, a word's text made once.
func Similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	set := make(map[string]uint8, 64) // the word's texts: 1 a, 2 b, 3 both
	addWords(set, a, 1)
	addWords(set, b, 2)
	if len(set) == 0 {
		return 1
	}
	common := 0
	for _, in := range set {
		if in == 3 {
			common++
		}
	}
	return float64(common) / float64(len(set))
}

// addWords marks each word of s in set with bit.
func addWords(set map[string]uint8, s string, bit uint8) {
	for i := 0; i < len(s); {
		r, n := next(s, i)
		if !isWord(r) {
			i += n
			continue
		}
		start, upper := i, false
		for i < len(s) {
			r, n = next(s, i)
			if !isWord(r) {
				break
			}
			upper = upper || r >= utf8.RuneSelf || 'A' <= r && r <= 'Z'
			i += n
		}
		w := s[start:i]
		if !upper {
			set[w] |= bit
			continue
		}
		var buf [64]byte
		if lw, ok := lowerASCII(buf[:0], w); ok {
			// Looked up without a copy: a word's text is made once per text it is new to.
			if in := set[string(lw)]; in&bit == 0 {
				set[string(lw)] = in | bit
			}
			continue
		}
		set[strings.ToLower(w)] |= bit
	}
}

// lowerASCII appends w lower-cased to dst; false when w is not all ASCII or is longer than
// dst's capacity.
func lowerASCII(dst []byte, w string) ([]byte, bool) {
	if len(w) > cap(dst) {
		return nil, false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// next is the rune at s[i] and its length.
func next(s string, i int) (rune, int) {
	if s[i] < utf8.RuneSelf {
		return rune(s[i]), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isWord: r is a letter or a digit.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r|0x20 && r|0x20 <= 'z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
