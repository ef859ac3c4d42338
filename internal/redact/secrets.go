package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
)

// The gateway's own secrets (issue 47) are masked whatever their shape and whatever
// Config.Detectors says: a detector keyed on a prefix cannot find an admin token or a
// provider key the operator chose, so they are matched exactly. The values come from the
// assembly (internal/gateway); this package only matches them.

// MinSecret is the shortest value Secrets masks: a shorter one cannot be told from ordinary
// text (the same bound as MinCredential).
const MinSecret = MinCredential

// SecretName and KeyName name the masks of the gateway's own secrets: [REDACTED:secret] for
// a value of Secrets or KeyHashes, [REDACTED:sluice_key] for a key of the gateway's format.
const (
	SecretName = "secret"
	KeyName    = "sluice_key"
)

// Hashed tokens: runs of these bytes, with up to two '=' of padding, of 16 to 512 bytes.
const (
	minHashed = 16
	maxHashed = 512
)

var hashedBody = newSet("A-Za-z0-9_+/-")

// secretDetectors are the detectors of c's own secrets, in priority order: the literal
// values (longest first at each offset), the gateway's key format; and the detector of the
// hashed keys (nil: none), which the window asks apart (Rules.hashed), only at the start of
// a run long enough to be one.
func secretDetectors(c Config) ([]detector, *detector) {
	var ds []detector
	byFirst := map[byte][]string{}
	seen := map[string]bool{}
	for _, s := range c.Secrets {
		for _, f := range secretForms(s) {
			if len(f) < MinSecret || seen[f] {
				continue
			}
			seen[f] = true
			byFirst[f[0]] = append(byFirst[f[0]], f)
		}
	}
	firsts := make([]int, 0, len(byFirst))
	for b := range byFirst {
		firsts = append(firsts, int(b))
	}
	sort.Ints(firsts) // a deterministic table
	for _, b := range firsts {
		vs := byFirst[byte(b)]
		sort.Slice(vs, func(x, y int) bool {
			if len(vs[x]) != len(vs[y]) {
				return len(vs[x]) > len(vs[y])
			}
			return vs[x] < vs[y]
		})
		var next []byte
		for _, v := range vs {
			next = append(next, v[1])
		}
		ds = append(ds, detector{name: SecretName, first: string(byte(b)), next: string(next), match: literals(vs)})
	}
	var h *detector
	if len(c.KeyHashes) > 0 {
		set := map[[sha256.Size]byte]bool{}
		for _, x := range c.KeyHashes {
			var sum [sha256.Size]byte
			if b, err := hex.DecodeString(x); err == nil && len(b) == sha256.Size {
				copy(sum[:], b)
				set[sum] = true
			}
		}
		h = &detector{name: SecretName, match: hashed(set)}
	}
	if c.KeyPrefix != "" {
		t := token{prefixes: []string{c.KeyPrefix}, body: b64url, min: 32}
		ds = append(ds, detector{name: KeyName, first: c.KeyPrefix[:1], word: true, next: c.KeyPrefix[1:2], match: t.match})
	}
	return ds, h
}

// hashStart reports whether a hashed key may open at k: k starts a run of hashedBody bytes
// that is at least minHashed long, or still undecided at the end of b. It is the prefilter
// of the hashed keys: a word or two of prose costs a few byte lookups, no detector call.
func hashStart(b []byte, k int) bool {
	if !hashedBody[b[k]] || k > 0 && hashedBody[b[k-1]] {
		return false
	}
	j := k
	for j < len(b) && j-k < minHashed && hashedBody[b[j]] {
		j++
	}
	return j-k >= minHashed || j == len(b)
}

// secretForms is a secret as a text may hold it: as it is, and URL-escaped (a password in
// a connection URL, a key in a query).
func secretForms(s string) []string {
	out := []string{s}
	if q := url.QueryEscape(s); q != s {
		out = append(out, q)
	}
	if p := url.PathEscape(s); p != s {
		out = append(out, p)
	}
	return out
}

// literals matches the longest of vs (sorted longest first, all opening on one byte) at i.
// A longer value still undecided holds the decision: a shorter one wins only once the
// longer ones are known not to match, so the answer does not depend on the split.
func literals(vs []string) func(v *view, i int) (status, int, int) {
	return func(v *view, i int) (status, int, int) {
		for _, s := range vs {
			switch v.lit(i, s, false) {
			case more:
				return more, 0, 0
			case hit:
				return hit, i, i + len(s)
			}
		}
		return miss, 0, 0
	}
}

// hashed matches a whole run of hashedBody bytes (plus its '=' padding) whose SHA-256 is in
// set: a key of the configuration file, which the gateway knows by its hash only. A run
// that continues a longer run of those bytes is not a candidate.
func hashed(set map[[sha256.Size]byte]bool) func(v *view, i int) (status, int, int) {
	return func(v *view, i int) (status, int, int) {
		if i > 0 && hashedBody[v.b[i-1]] {
			return miss, 0, 0
		}
		j, st := v.span(i, hashedBody)
		if st == more {
			if j-i > maxHashed {
				return miss, 0, 0
			}
			return more, 0, 0
		}
		if n := j - i; n < minHashed || n > maxHashed || v.atCap(j) {
			return miss, 0, 0
		}
		e := j
		for e < j+2 {
			c, st := v.at(e)
			if st == more {
				return more, 0, 0
			}
			if st == miss || c != '=' {
				break
			}
			e++
		}
		if set[sha256.Sum256(v.b[i:e])] {
			return hit, i, e
		}
		if e > j && set[sha256.Sum256(v.b[i:j])] {
			return hit, i, j
		}
		return miss, 0, 0
	}
}
