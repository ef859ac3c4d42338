package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// Secrets of the shapes no built-in detector knows (issue 47).
const (
	ownAdmin    = "correct-horse-battery-staple-42"
	ownProvider = "Zt9qL2mX7vB4nC8kD1fG6hJ3pR5sW0yA"
	ownOIDC     = "oidc.client/secret+value=="
	ownPassword = "p@ss:w0rd/with#odd"
	ownStatic   = "hunter2hunter2hunter2XYZ"
	ownOdd      = "AbCdEfGh12345678#tail!x"
	ownMinted   = "sk-sluice-0aZ9bY8cX7dW6eV5fU4gT3hS2iR1jQ0kP9lO8mN7n"
	ownPersonal = "sk-sluice-user-0aZ9bY8cX7dW6eV5fU4gT3hS2iR1jQ0kP9lO8mN7n"
)

func hexHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ownRules are the default rules with the gateway's own secrets, and with every built-in
// detector switched off: the secrets must not depend on them.
func ownRules(t testing.TB) []*Rules {
	t.Helper()
	own := Config{Secrets: []string{ownAdmin, ownProvider, ownOIDC, ownPassword, ownOdd, "short"},
		KeyHashes: []string{hexHash(ownStatic), "not-a-hash"}, KeyPrefix: "sk-sluice-"}
	off := own
	off.Detectors = map[string]bool{}
	for _, n := range DetectorNames() {
		off.Detectors[n] = false
	}
	small := own
	small.MaxMatchBytes, small.MaxRunBytes, small.WindowBytes = 64, 16, 16
	var out []*Rules
	for _, c := range []Config{own, off, small} {
		r, err := Compile(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestOwnSecrets(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"admin token in prose", "my token is " + ownAdmin + ", keep it", "my token is [REDACTED:secret], keep it"},
		{"glued to a word", `print("\n` + ownAdmin + `")`, `print("\n[REDACTED:secret]")`},
		{"provider key", "key=" + ownProvider + ".", "key=[REDACTED:secret]."},
		{"oidc secret", `{"client_secret":"` + ownOIDC + `"}`, `{"client_secret":"[REDACTED:secret]"}`},
		{"escaped password", "redis://u:p%40ss%3Aw0rd%2Fwith%23odd@h:6379", "redis://u:[REDACTED:secret]@h:6379"},
		{"static key by hash", "Bearer " + ownStatic + " ok", "Bearer [REDACTED:secret] ok"},
		{"static key padded", "k " + ownStatic + "== ok", "k [REDACTED:secret]== ok"},
		{"minted key", "use " + ownMinted + " now", "use [REDACTED:sluice_key] now"},
		{"personal token", "use " + ownPersonal + " now", "use [REDACTED:sluice_key] now"},
		{"password in prose", "pw " + ownPassword + " ok", "pw [REDACTED:secret] ok"},
		{"raw password in a URL", "redis://u:" + ownPassword + "@h", "redis://u:[REDACTED:secret]@h"},
		{"a bearer token stops inside", "Bearer " + ownOdd + " ok", "Bearer [REDACTED:secret] ok"},
		{"short value kept", "a short word", "a short word"},
		{"longer run is not the static key", "x" + ownStatic, "x" + ownStatic},
		{"near miss", ownStatic[:len(ownStatic)-1] + "Q", ownStatic[:len(ownStatic)-1] + "Q"},
	}
	for k, r := range ownRules(t) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got := r.Redact(tc.text)
				if k == 1 && got != tc.want { // the built-in detectors off: the secrets alone
					t.Errorf("got %q, want %q", got, tc.want)
				}
				for _, s := range ownPlanted[:8] {
					if strings.Contains(tc.want, "REDACTED") && strings.Contains(got, s) {
						t.Errorf("got %q, want %q masked", got, s)
					}
				}
			})
		}
	}
}

func TestOwnSecretCounts(t *testing.T) {
	r := ownRules(t)[1]
	_, n := r.RedactCount(ownAdmin + " " + ownMinted + " " + ownStatic)
	if n[SecretName] != 2 || n[KeyName] != 1 {
		t.Errorf("got %v, want 2 %s and 1 %s", n, SecretName, KeyName)
	}
}

func TestKeyPrefixTooShort(t *testing.T) {
	if _, err := Compile(Config{KeyPrefix: "s"}); err == nil {
		t.Error("got no error for a one-byte key prefix")
	}
}

var ownPlanted = []string{ownAdmin, ownProvider, ownOIDC, ownPassword, ownOdd, ownStatic, ownMinted, ownPersonal,
	"redis://u:" + ownPassword + "@h", "Bearer " + ownOdd}

// TestOwnSecretEverySplit streams each secret inside a text cut at every offset, in two
// pieces and in pieces of every size from 1 to 9: the stream equals Redact of the whole,
// and the secret never reaches it.
func TestOwnSecretEverySplit(t *testing.T) {
	for _, r := range ownRules(t) {
		for _, s := range ownPlanted {
			text := "before the secret: " + s + " and after"
			for c := 1; c < len(text); c++ {
				checkSplit(t, r, text, []int{c})
				checkOwnMasked(t, r, text, []int{c}, s)
			}
			for n := 1; n < 10; n++ {
				var cuts []int
				for c := n; c < len(text); c += n {
					cuts = append(cuts, c)
				}
				checkSplit(t, r, text, cuts)
				checkOwnMasked(t, r, text, cuts, s)
			}
		}
	}
}

func checkOwnMasked(t *testing.T, r *Rules, text string, cuts []int, secret string) {
	t.Helper()
	w := r.NewWindow()
	var b strings.Builder
	last := 0
	for _, c := range append(cuts, len(text)) {
		b.WriteString(w.Write(text[last:c]))
		last = c
	}
	b.WriteString(w.Flush())
	for _, s := range ownPlanted[:8] { // the secrets themselves, planted alone or inside a URL
		if strings.Contains(secret, s) && strings.Contains(b.String(), s) {
			t.Fatalf("secret %q survived in %q (cuts %v)", s, b.String(), cuts)
		}
	}
}

// FuzzOwnSecretSplit plants one of the gateway's own secrets between arbitrary texts and
// cuts the whole at arbitrary points: the window contract holds and the secret is masked.
func FuzzOwnSecretSplit(f *testing.F) {
	for k, s := range fuzzSeeds {
		f.Add(s, s[len(s)/2:], uint8(k), []byte{byte(k), 5, 9})
	}
	rules := ownRules(f)
	f.Fuzz(func(t *testing.T, before, after string, which uint8, steps []byte) {
		if len(before) > 1024 || len(after) > 1024 {
			return
		}
		secret := ownPlanted[int(which)%len(ownPlanted)]
		text := before + " " + secret + " " + after
		cuts := fuzzCuts(text, steps)
		for _, r := range rules {
			checkSplit(t, r, text, cuts)
			checkOwnMasked(t, r, text, cuts, secret)
		}
	})
}
