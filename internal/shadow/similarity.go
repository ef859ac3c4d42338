package shadow

import (
	"strings"
	"unicode"
)

// Similarity is how alike two answers are, 0 (no word in common) to 1 (the same words): the
// Jaccard index of their word sets, |A ∩ B| / |A ∪ B|, where a word is a run of letters and
// digits, compared without case. Order, repetition, spacing and punctuation do not count, so
// a paraphrase scores below a reformatting of the same text; two empty answers score 1, an
// empty and a non-empty one 0. It reads each text once and costs one set per answer.
func Similarity(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return float64(common) / float64(len(wa)+len(wb)-common)
}

// words is the set of s's words, lower-cased.
func words(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		set[strings.ToLower(w)] = true
	}
	return set
}
