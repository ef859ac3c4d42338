package redact

import "bytes"

// A detector decides, at an offset holding one of its first bytes, whether a match opens
// there and which bytes [ms, me) to mask. Detectors run in priority order at the same offset;
// the leftmost opening wins.
type detector struct {
	name  string
	first string // bytes that can open a candidate
	word  bool   // opens only where the previous byte is not a letter or digit ("task-" is no key)
	next  string // bytes that can follow the first one; "" means any (a cheap second filter)
	match func(v *view, i int) (st status, ms, me int)
}

// token describes a key that is one literal prefix plus a body: the common shape of provider
// API keys. A body that reaches the cap is masked whole (DESIGN §4).
type token struct {
	prefixes []string
	not      []string // prefixes that belong to another detector (sk-ant- is not OpenAI)
	body     *byteSet
	min, max int  // body length; max 0 means unbounded
	digit    bool // the body must contain a digit: keeps prose words out
	edge     bool // the byte after the body must not be a letter or digit
}

func (t token) match(v *view, i int) (status, int, int) {
	for _, p := range t.not {
		switch v.lit(i, p, false) {
		case more:
			return more, 0, 0
		case hit:
			return miss, 0, 0
		}
	}
	for _, p := range t.prefixes {
		switch v.lit(i, p, false) {
		case more:
			return more, 0, 0
		case miss:
			continue
		}
		k := i + len(p)
		j, st := v.span(k, t.body)
		if st == more {
			return more, 0, 0
		}
		if v.atCap(j) {
			return hit, i, j
		}
		n := j - k
		if n < t.min || (t.max > 0 && n > t.max) || (t.digit && !hasDigit(v.b[k:j])) {
			return miss, 0, 0
		}
		if t.edge {
			switch v.in(j, alnum) {
			case more:
				return more, 0, 0
			case hit:
				return miss, 0, 0
			}
		}
		return hit, i, j
	}
	return miss, 0, 0
}

var b64url = newSet("A-Za-z0-9_-")

func keyDetectors() []detector {
	tok := func(name, first string, t token) detector {
		var next string
		for _, p := range t.prefixes {
			next += p[1:2]
		}
		return detector{name: name, first: first, word: true, next: next, match: t.match}
	}
	return []detector{
		{name: "private_key", first: "-", word: true, next: "-", match: matchPEM},
		{name: "bearer", first: "aA", word: true, next: "uU", match: matchAuthorization},
		{name: "bearer", first: "bB", word: true, next: "eE", match: matchBearer},
		{name: "aws_secret_key", first: "aAsS", word: true, next: "wWeE", match: matchAWSSecret},
		tok("anthropic_key", "s", token{prefixes: []string{"sk-ant-"}, body: b64url, min: 20}),
		tok("openai_key", "s", token{prefixes: []string{"sk-"}, not: []string{"sk-ant-"}, body: b64url, min: 20, digit: true}),
		tok("stripe_key", "sr", token{prefixes: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, body: alnum, min: 16}),
		tok("google_api_key", "A", token{prefixes: []string{"AIza"}, body: b64url, min: 35, max: 35}),
		tok("aws_access_key", "A", token{prefixes: []string{"AKIA", "ASIA"}, body: upperNum, min: 16, max: 16, edge: true}),
		tok("github_token", "g", token{prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: alnum, min: 36}),
		tok("github_token", "g", token{prefixes: []string{"github_pat_"}, body: newSet("A-Za-z0-9_"), min: 22}),
		tok("gitlab_token", "g", token{prefixes: []string{"glpat-"}, body: b64url, min: 20}),
		tok("slack_token", "x", token{prefixes: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-"}, body: newSet("A-Za-z0-9-"), min: 10, digit: true}),
		{name: "jwt", first: "e", word: true, next: "y", match: matchJWT},
		{name: "database_url", first: "pmraPMRA", word: true, next: "oOyYaAeEmM", match: matchDatabaseURL},
	}
}

var bearerToken = newSet("A-Za-z0-9._~+/=-")

// matchBearer masks the token of "Bearer <token>", keeping the scheme word.
func matchBearer(v *view, i int) (status, int, int) {
	if st := v.lit(i, "bearer", true); st != hit {
		return st, 0, 0
	}
	k, st := v.span(i+6, spaceTab)
	if st == more {
		return more, 0, 0
	}
	if k == i+6 || v.atCap(k) {
		return miss, 0, 0
	}
	j, st := v.span(k, bearerToken)
	if st == more {
		return more, 0, 0
	}
	if v.atCap(j) {
		return hit, k, j
	}
	if j-k < 16 || !hasDigit(v.b[k:j]) {
		return miss, 0, 0
	}
	return hit, k, j
}

// credential is what an Authorization value may hold: printable ASCII but spaces and quotes.
var credential = func() *byteSet {
	s := newSet("!-~")
	s['"'], s['\''], s['`'] = false, false, false
	return s
}()

// matchAuthorization masks the value of an Authorization header or field ("Authorization:
// Basic dXNl...", `"authorization": "Bearer ..."`), keeping the label.
func matchAuthorization(v *view, i int) (status, int, int) {
	if st := v.lit(i, "authorization", true); st != hit {
		return st, 0, 0
	}
	k, st := afterLabel(v, i+len("authorization"))
	if st != hit {
		return st, 0, 0
	}
	// "<scheme> <credential>": a short word, spaces, then the credential.
	w, st := v.span(k, newLetters)
	if st == more {
		return more, 0, 0
	}
	if n := w - k; n >= 2 && n <= 16 {
		c, st := v.span(w, spaceTab)
		if st == more {
			return more, 0, 0
		}
		if c > w {
			e, st := v.span(c, credential)
			if st == more {
				return more, 0, 0
			}
			if v.atCap(e) || (e-c >= 8 && looksSecret(v.b[c:e]) && !pemDashes(v.b[c:e])) {
				return hit, k, e
			}
		}
	}
	// A bare credential.
	e, st := v.span(k, credential)
	if st == more {
		return more, 0, 0
	}
	if v.atCap(e) || (e-k >= 16 && looksSecret(v.b[k:e]) && !pemDashes(v.b[k:e])) {
		return hit, k, e
	}
	return miss, 0, 0
}

// pemDashes keeps a credential from swallowing the start of a PEM block, which is its own
// candidate spanning lines.
func pemDashes(b []byte) bool { return bytes.Contains(b, []byte("-----")) }

var newLetters = newSet("A-Za-z")

// afterLabel skips what separates a label from its value: an optional closing quote, spaces,
// ':' or '=', spaces and an optional opening quote. It returns the value's offset.
func afterLabel(v *view, k int) (int, status) {
	c, st := v.at(k)
	if st != hit {
		return 0, st
	}
	if c == '"' || c == '\'' {
		k++
	}
	if k, st = v.span(k, spaceTab); st != hit {
		return 0, st
	}
	if c, st = v.at(k); st != hit {
		return 0, st
	}
	if c != ':' && c != '=' {
		return 0, miss
	}
	if k, st = v.span(k+1, spaceTab); st != hit {
		return 0, st
	}
	if c, st = v.at(k); st != hit {
		return 0, st
	}
	if c == '"' || c == '\'' {
		k++
	}
	if v.atCap(k) {
		return 0, miss
	}
	return k, hit
}

// looksSecret keeps prose out of labelled values: a credential has a digit, mixed case or
// base64 punctuation.
func looksSecret(b []byte) bool {
	var lower, upper bool
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9', c == '+', c == '/', c == '=', c == '_', c == '-', c == '.':
			return true
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	return lower && upper
}

var (
	awsLabels = []string{"aws_secret_access_key", "aws_secret_key", "secret_access_key", "secretaccesskey"}
	awsSecret = newSet("A-Za-z0-9/+=")
)

// matchAWSSecret masks a 40-character AWS secret key only after a literal label: a bare
// 40-character base64 string is indistinguishable from a hash, so the label opens the
// candidate.
func matchAWSSecret(v *view, i int) (status, int, int) {
	for _, l := range awsLabels {
		switch v.lit(i, l, true) {
		case more:
			return more, 0, 0
		case miss:
			continue
		}
		k, st := afterLabel(v, i+len(l))
		if st != hit {
			return st, 0, 0
		}
		j, st := v.span(k, awsSecret)
		if st == more {
			return more, 0, 0
		}
		if j-k != 40 {
			return miss, 0, 0
		}
		return hit, k, j
	}
	return miss, 0, 0
}

// matchJWT masks header.payload.signature where header and payload are base64url JSON
// objects (both start "eyJ", the encoding of `{"`). The signature may be empty (alg none).
func matchJWT(v *view, i int) (status, int, int) {
	k := i
	for part := 0; part < 2; part++ {
		if st := v.lit(k, "eyJ", false); st != hit {
			if part == 1 && st == miss && v.atCap(k) {
				return hit, i, k
			}
			return st, 0, 0
		}
		j, st := v.span(k+3, b64url)
		if st == more {
			return more, 0, 0
		}
		if v.atCap(j) {
			return hit, i, j
		}
		if j-k < 10 {
			return miss, 0, 0
		}
		if st := v.lit(j, ".", false); st != hit {
			return st, 0, 0
		}
		k = j + 1
	}
	j, st := v.span(k, b64url)
	if st == more {
		return more, 0, 0
	}
	return hit, i, j
}

var pemLabel = newSet("A-Z0-9 ")

// matchPEM masks a PEM private key block, header to footer, across lines: one candidate.
func matchPEM(v *view, i int) (status, int, int) {
	if st := v.lit(i, "-----BEGIN ", false); st != hit {
		return st, 0, 0
	}
	k := i + len("-----BEGIN ")
	j, st := v.span(k, pemLabel)
	if st == more {
		return more, 0, 0
	}
	if j-k > 48 || !bytes.Contains(v.b[k:j], []byte("PRIVATE KEY")) {
		return miss, 0, 0
	}
	if st := v.lit(j, "-----", false); st != hit {
		return st, 0, 0
	}
	for from := j + 5; ; {
		e := bytes.Index(v.b[from:v.end], []byte("-----END "))
		if e < 0 {
			if !v.final {
				return more, 0, 0
			}
			// Capped, or the text ended inside the block: mask it whole.
			return hit, i, runeStart(v.b, v.end, i+1)
		}
		e += from + len("-----END ")
		f, st := v.span(e, pemLabel)
		if st == more {
			return more, 0, 0
		}
		switch v.lit(f, "-----", false) {
		case more:
			return more, 0, 0
		case hit:
			return hit, i, f + 5
		}
		if v.final && f+5 > v.end { // the text or the cap ends inside the footer
			return hit, i, runeStart(v.b, v.end, i+1)
		}
		from = e
	}
}

var (
	dbSchemes  = []string{"postgresql://", "postgres://", "mysql://", "mariadb://", "mongodb+srv://", "mongodb://", "rediss://", "redis://", "amqps://", "amqp://"}
	dbUser     = newSet("A-Za-z0-9._~%!$&*+,;=-")
	dbPassword = func() *byteSet {
		s := newSet("!-~")
		s['@'], s['"'], s['\''], s['`'], s['<'], s['>'] = false, false, false, false, false, false
		return s
	}()
	dbHost = newSet("A-Za-z0-9.[_-")
)

// matchDatabaseURL masks the password of a connection URL, keeping scheme, user and host so
// the text stays useful.
func matchDatabaseURL(v *view, i int) (status, int, int) {
	for _, s := range dbSchemes {
		switch v.lit(i, s, true) {
		case more:
			return more, 0, 0
		case miss:
			continue
		}
		k, st := v.span(i+len(s), dbUser)
		if st == more {
			return more, 0, 0
		}
		if st := v.lit(k, ":", false); st != hit {
			return st, 0, 0
		}
		p := k + 1
		e, st := v.span(p, dbPassword)
		if st == more {
			return more, 0, 0
		}
		if v.atCap(e) {
			return hit, p, e
		}
		if e == p {
			return miss, 0, 0
		}
		if st := v.lit(e, "@", false); st != hit {
			return st, 0, 0
		}
		if st := v.in(e+1, dbHost); st != hit {
			return st, 0, 0
		}
		return hit, p, e
	}
	return miss, 0, 0
}
