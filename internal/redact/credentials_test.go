package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	testKey   = "sk-proj-Qm7ZrT2xWv9LpK4nB8cD1eF6gH3jS5aU"
	testQuery = "qk+Jv6/Rn3=Xz8Lq2Wm7"
)

func TestCredentialsMask(t *testing.T) {
	c := NewCredentials(testKey, testQuery, "short", "Basic "+base64.StdEncoding.EncodeToString([]byte("gateway:pw-Hq2Lx9Vz4Rk8")))
	m := CredentialMask
	for _, tc := range []struct{ name, in, want string }{
		{"no credential", "The server had an error. Sorry about that!", "The server had an error. Sorry about that!"},
		{"whole key", "Incorrect API key provided: " + testKey + ".", "Incorrect API key provided: " + m + "."},
		{"bearer", "Authorization: Bearer " + testKey, "Authorization: Bearer " + m},
		{"prefix and suffix quoted", "key sk-proj-Qm7Z****gH3jS5aU given", "key " + m + "****" + m + " given"},
		{"short suffix stays", "key sk-proj-Qm7Z****jS5aU given", "key " + m + "****jS5aU given"},
		{"seven bytes stay", "key sk-proj****S5aU", "key sk-proj****S5aU"},
		{"eight bytes go", "key sk-proj-****", "key " + m + "****"},
		{"middle run", "got xWv9LpK4nB8 in", "got " + m + " in"},
		{"query escaped", "url ?key=" + url.QueryEscape(testQuery) + "&v=1", "url ?key=" + m + "&v=1"},
		{"path escaped", "/" + url.PathEscape(testQuery) + "/", "/" + m + "/"},
		{"base64 basic of user:key", "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+testKey)), "Basic dTpz" + m}, // "u:s": the user's group is not the key's
		{"basic password decoded", "user gateway password pw-Hq2Lx9Vz4Rk8", "user gateway password " + m},
		{"short value ignored", "short circuit", "short circuit"},
		{"two keys touching", testKey + testQuery, m},
		{"mask text kept", "already " + m + " masked", "already " + m + " masked"},
		{"short text", "sk-proj", "sk-proj"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Mask(tc.in)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A run cut out of a multi-byte credential is widened to whole runes.
func TestCredentialsMaskKeepsUTF8(t *testing.T) {
	c := NewCredentials("pässwörd-ünïcödé-secret")
	for _, in := range []string{"x ässwörd-ü y", "öd\u00e9-secre", "ärd-ünïcö"} {
		got := c.Mask("é" + in + "é")
		if !utf8.ValidString(got) {
			t.Errorf("Mask(%q) = %q, not valid UTF-8", in, got)
		}
		if !strings.Contains(got, CredentialMask) {
			t.Errorf("Mask(%q) = %q, want a mask", in, got)
		}
	}
}

// A credential made partly of the mask's own text still cannot be rebuilt around a mask.
func TestCredentialsMaskAroundMask(t *testing.T) {
	cred := "ential]" + "Zq8xW2vK"
	c := NewCredentials(cred)
	got := c.Mask("a ential]Zq8xW2vK b")
	if leaks(got, cred) != "" {
		t.Errorf("got %q, leaks %q", got, leaks(got, cred))
	}
}

func TestNilCredentials(t *testing.T) {
	var c *Credentials
	if got := c.Mask(testKey); got != testKey {
		t.Errorf("got %q from a nil masker, want the text unchanged", got)
	}
	if got := NewCredentials().Mask(testKey); got != testKey {
		t.Errorf("got %q with no credentials, want the text unchanged", got)
	}
}

// Scrub masks the credentials, then what the built-in detectors find.
func TestScrubber(t *testing.T) {
	s := NewScrubber(NewCredentials("custom-Hq2Lx9Vz4Rk8Ww3N"), nil)
	in := "bad key custom-Hq2Lx9Vz4Rk8Ww3N, also AKIAIOSFODNN7EXAMPLE"
	want := "bad key " + CredentialMask + ", also [REDACTED:aws_access_key]"
	if got := s.Scrub(in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// leaks returns the first window of MinCredential bytes of cred found in out that is not
// part of the mask's own text, "" when none is.
func leaks(out, cred string) string {
	for i := 0; i+MinCredential <= len(cred); i++ {
		g := cred[i : i+MinCredential]
		if !strings.Contains(CredentialMask, g) && strings.Contains(out, g) {
			return g
		}
	}
	return ""
}

// FuzzCredentials: for any text and credentials, no window of MinCredential bytes of a
// credential survives, and a text holding none is returned unchanged.
func FuzzCredentials(f *testing.F) {
	f.Add("Incorrect API key provided: "+testKey+" and sk-proj-Qm7Z***aU", testKey, testQuery)
	f.Add("?key="+url.QueryEscape(testQuery), testQuery, "")
	f.Add("ential]Zq8xW2vK[REDACTED:credential]ential]Zq8x", "ential]Zq8xW2vK", "[REDACTED:c")
	f.Add("aaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaa", "baaaaaaaa")
	f.Add("é\xbd\xbdpässwörd", "\xbd\xbdpässw", "wörd\xff\xfe")
	f.Fuzz(func(t *testing.T, text, a, b string) {
		if len(text) > 4096 || len(a) > 256 || len(b) > 256 {
			return
		}
		c := NewCredentials(a, b)
		got := c.Mask(text)
		for _, cred := range []string{a, b} {
			if g := leaks(got, cred); g != "" {
				t.Fatalf("Mask(%q) with %q = %q: holds %q", text, cred, got, g)
			}
		}
		if leaks(text, a) == "" && leaks(text, b) == "" && !encoded(text, a, b) && got != text {
			t.Fatalf("Mask(%q) = %q, want it unchanged: it holds no credential", text, got)
		}
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("Mask(%q) = %q: not valid UTF-8", text, got)
		}
	})
}

// encoded reports whether text holds a window of an encoded form of a or b (which the
// masker also masks, so the text may change).
func encoded(text string, creds ...string) bool {
	for _, c := range creds {
		for _, f := range forms(c) {
			if leaks(text, f) != "" {
				return true
			}
		}
	}
	return false
}

// A credential made of the mask's own characters cannot make Mask take a pass per byte (here
// each pass would mask one more "a"): the text is masked whole instead, its tail with it.
func TestCredentialsMaskBounded(t *testing.T) {
	c := NewCredentials("ential]a")
	got := c.Mask(CredentialMask + strings.Repeat("a", 4000) + " tail")
	if got != CredentialMask {
		t.Errorf("got %d bytes %.60q..., want the text masked whole", len(got), got)
	}
}
