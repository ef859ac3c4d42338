package redact

import "bytes"

// PII detectors run only when Config.PII is set. Those whose match spans spaces (cards and
// IBANs in groups, phone numbers) open their candidate at the first group, so a window holds
// the groups until the sequence ends and the checksum decides.

func piiDetectors() []detector {
	return []detector{
		{name: "credit_card", first: "0123456789", word: true, next: "0123456789", match: matchCard},
		{name: "iban", first: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", word: true, next: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", match: matchIBAN},
		{name: "phone", first: "+(0123456789", word: true, next: "0123456789", match: matchPhone},
		{name: "email", first: emailLocalChars, word: true, next: emailLocalChars + "@", match: matchEmail},
	}
}

// groups reads runs of bytes in set separated by single sep bytes (one separator kind per
// sequence, from seps), stopping after maxLen bytes of content. It returns the end offset of
// each group and the number of content bytes before it.
func groups(v *view, i int, set *byteSet, seps string, maxLen, maxGroup int) (ends, lens []int, st status) {
	k, total := i, 0
	var sep byte
	for {
		j, st := v.span(k, set)
		if st == more {
			return nil, nil, more
		}
		if j == k || j-k > maxGroup || total+j-k > maxLen || v.atCap(j) {
			return ends, lens, hit
		}
		// A group glued to a letter is not a group ("1234abc").
		if st := v.in(j, alnum); st != miss {
			if st == more {
				return nil, nil, more
			}
			return ends, lens, hit
		}
		total += j - k
		ends, lens = append(ends, j), append(lens, total)
		c, st := v.at(j)
		if st == more {
			return nil, nil, more
		}
		if st == miss || (sep != 0 && c != sep) || (sep == 0 && !containsByte(seps, c)) {
			return ends, lens, hit
		}
		switch v.in(j+1, set) {
		case more:
			return nil, nil, more
		case miss:
			return ends, lens, hit
		}
		sep, k = c, j+1
	}
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// matchCard masks 13 to 19 digits, contiguous or in groups separated by one space or dash,
// that pass the Luhn check: the longest such prefix of the group sequence.
func matchCard(v *view, i int) (status, int, int) {
	ends, lens, st := groups(v, i, digits, " -", 19, 19)
	if st != hit {
		return st, 0, 0
	}
	for g := len(ends) - 1; g >= 0; g-- {
		if lens[g] < 13 || (g > 0 && !groupedCard(ends[:g+1], i)) {
			continue
		}
		if luhn(v.b[i:ends[g]]) {
			return hit, i, ends[g]
		}
	}
	return miss, 0, 0
}

// groupedCard accepts groups of 3 to 6 digits (4-4-4-4, Amex 4-6-5, 4-4-4-4-3).
func groupedCard(ends []int, i int) bool {
	start := i
	for _, e := range ends {
		if n := e - start; n < 3 || n > 6 {
			return false
		}
		start = e + 1
	}
	return true
}

func luhn(b []byte) bool {
	sum, double := 0, false
	for k := len(b) - 1; k >= 0; k-- {
		c := b[k]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// matchIBAN masks an IBAN, contiguous or in groups of four, whose mod-97 checksum is 1.
func matchIBAN(v *view, i int) (status, int, int) {
	for k := 0; k < 4; k++ {
		set := digits
		if k < 2 {
			set = newUpper
		}
		if st := v.in(i+k, set); st != hit {
			return st, 0, 0
		}
	}
	ends, lens, st := groups(v, i, upperNum, " ", 34, 34)
	if st != hit {
		return st, 0, 0
	}
	if len(ends) == 0 {
		return miss, 0, 0
	}
	if len(ends) > 1 && ends[0]-i != 4 {
		ends, lens = ends[:1], lens[:1]
	}
	for g := len(ends) - 1; g >= 0; g-- {
		if lens[g] < 15 || !ibanGroups(ends[:g+1], i) {
			continue
		}
		if ibanChecksum(v.b[i:ends[g]]) {
			return hit, i, ends[g]
		}
	}
	return miss, 0, 0
}

var newUpper = newSet("A-Z")

// ibanGroups accepts one contiguous run or groups of four with a shorter last group.
func ibanGroups(ends []int, i int) bool {
	start := i
	for g, e := range ends {
		if n := e - start; n > 4 || (n < 4 && g < len(ends)-1) {
			return len(ends) == 1
		}
		start = e + 1
	}
	return true
}

func ibanChecksum(b []byte) bool {
	var s []byte
	for _, c := range b {
		if c != ' ' {
			s = append(s, c)
		}
	}
	s = append(s[4:], s[:4]...)
	r := 0
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case 'A' <= c && c <= 'Z':
			r = (r*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return r == 1
}

// matchPhone masks "+<country> <groups>" with 8 to 15 digits (E.164), and the North American
// shapes "(415) 555-0100", "415-555-0100", "415.555.0100" and "415 555 0100".
func matchPhone(v *view, i int) (status, int, int) {
	c := v.b[i]
	if c == '+' {
		if st := v.in(i+1, digits); st != hit {
			return st, 0, 0
		}
		ends, lens, st := groups(v, i+1, digits, " -.", 15, 15)
		if st != hit {
			return st, 0, 0
		}
		for g := len(ends) - 1; g >= 0; g-- {
			if lens[g] >= 8 {
				return hit, i, ends[g]
			}
		}
		return miss, 0, 0
	}
	k := i
	if c == '(' {
		if st := v.lit(i+4, ")", false); st != hit {
			return st, 0, 0
		}
		j, st := v.span(i+1, digits)
		if st == more {
			return more, 0, 0
		}
		if j != i+4 {
			return miss, 0, 0
		}
		k = i + 5
		if c, st := v.at(k); st == more {
			return more, 0, 0
		} else if st == hit && c == ' ' {
			k++
		}
	}
	ends, _, st := groups(v, k, digits, " -.", 10, 4)
	if st != hit {
		return st, 0, 0
	}
	want := []int{3, 3, 4}
	if c == '(' {
		want = []int{3, 4}
	}
	if len(ends) != len(want) {
		return miss, 0, 0
	}
	start := k
	for g, e := range ends {
		if e-start != want[g] {
			return miss, 0, 0
		}
		start = e + 1
	}
	return hit, i, ends[len(ends)-1]
}

const emailLocalChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-"

var (
	emailLocal  = newSet(emailLocalChars)
	emailDomain = newSet("A-Za-z0-9.-")
)

// matchEmail masks local@domain.tld. It opens only at the start of the local part.
func matchEmail(v *view, i int) (status, int, int) {
	if i > 0 && emailLocal[v.b[i-1]] {
		return miss, 0, 0
	}
	at, st := v.span(i, emailLocal)
	if st == more {
		return more, 0, 0
	}
	if at-i > 64 || v.atCap(at) {
		return miss, 0, 0
	}
	if st := v.lit(at, "@", false); st != hit {
		return st, 0, 0
	}
	e, st := v.span(at+1, emailDomain)
	if st == more {
		return more, 0, 0
	}
	if v.atCap(e) {
		return miss, 0, 0
	}
	for e > at+1 && (v.b[e-1] == '.' || v.b[e-1] == '-') {
		e-- // a sentence's full stop is not part of the domain
	}
	labels := bytes.Split(v.b[at+1:e], []byte("."))
	if len(labels) < 2 {
		return miss, 0, 0
	}
	for _, l := range labels {
		if len(l) == 0 {
			return miss, 0, 0
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 {
		return miss, 0, 0
	}
	for _, c := range tld {
		if !newLetters[c] {
			return miss, 0, 0
		}
	}
	return hit, i, e
}
