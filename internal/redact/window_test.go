package redact

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExample4(t *testing.T) {
	// EXAMPLES.md example 4, exactly.
	w := Default().NewWindow()
	pieces := []string{"The key is sk-pr", "oj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7", " ok"}
	// One release per piece and one at the finish; the key's own piece releases nothing.
	want := []string{"The key is ", "", "[REDACTED:openai_key] ", "ok"}
	var got []string
	for _, p := range pieces {
		got = append(got, w.Write(p))
	}
	got = append(got, w.Flush())
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("release %d: got %q, want %q", k, got[k], want[k])
		}
	}
	if whole := Default().Redact(strings.Join(pieces, "")); whole != strings.Join(want, "") {
		t.Errorf("Redact: got %q, want %q", whole, strings.Join(want, ""))
	}
}

func TestLag(t *testing.T) {
	pii, err := Compile(Config{PII: true, Terms: []string{"falcon"}})
	if err != nil {
		t.Fatal(err)
	}
	prose := "Streaming answers should reach the reader word by word, with no fixed lag, even about asks and tasks."
	for _, r := range []*Rules{Default(), pii, nil} {
		w := r.NewWindow()
		words := strings.SplitAfter(prose, " ")
		for k, word := range words {
			// The word arrives in two halves; only the whitespace after it releases it.
			half := len(word) / 2
			if got := w.Write(word[:half]); got != "" && k > 0 {
				t.Errorf("word %d first half: got %q, want nothing", k, got)
			}
			got := w.Write(word[half:])
			want := word
			if k == len(words)-1 {
				want = ""
			}
			if got != want {
				t.Errorf("word %d: got %q, want %q", k, got, want)
			}
		}
		if got, want := w.Flush(), words[len(words)-1]; got != want {
			t.Errorf("flush: got %q, want %q", got, want)
		}
	}

	t.Run("short answer at flush", func(t *testing.T) {
		w := Default().NewWindow()
		if got := w.Write("Yes"); got != "" {
			t.Errorf("got %q, want nothing before the end", got)
		}
		if got := w.Flush(); got != "Yes" {
			t.Errorf("got %q, want %q", got, "Yes")
		}
	})

	t.Run("cjk released at max run", func(t *testing.T) {
		r, err := Compile(Config{MaxRunBytes: 64})
		if err != nil {
			t.Fatal(err)
		}
		w := r.NewWindow()
		text := strings.Repeat("漢字かな", 20) // 240 bytes, no whitespace
		var released int
		for _, c := range text {
			s := w.Write(string(c))
			if !utf8.ValidString(s) {
				t.Fatalf("release %q splits a rune", s)
			}
			released += len(s)
		}
		if released < len(text)-64 {
			t.Errorf("got %d bytes released before the end, want at least %d", released, len(text)-64)
		}
		if got := w.Write("\n"); released+len(got) != len(text)+1 {
			t.Errorf("newline: got %d bytes released in all, want %d", released+len(got), len(text)+1)
		}
	})

	t.Run("pem held across lines", func(t *testing.T) {
		w := Default().NewWindow()
		var out string
		for _, line := range strings.SplitAfter("key:\n"+fakePEM+"\nbye ", "\n") {
			s := w.Write(line)
			if strings.Contains(s, "MII") {
				t.Fatalf("released %q: part of the key", s)
			}
			out += s
		}
		out += w.Flush()
		if want := "key:\n[REDACTED:private_key]\nbye "; out != want {
			t.Errorf("got %q, want %q", out, want)
		}
	})

	t.Run("card groups held", func(t *testing.T) {
		w := pii.NewWindow()
		var out string
		for _, p := range []string{"pay ", "4111 ", "1111 ", "1111 ", "1111", " now "} {
			s := w.Write(p)
			if strings.Contains(s, "1111") {
				t.Fatalf("released %q: part of the card", s)
			}
			out += s
		}
		if want := "pay [REDACTED:credit_card] now "; out != want {
			t.Errorf("got %q, want %q", out, want)
		}
	})

	t.Run("free pattern holds window", func(t *testing.T) {
		r, err := Compile(Config{WindowBytes: 32, Patterns: []Pattern{{Name: "ssn", Regex: `\d{3}-\d{2}-\d{4}`}}})
		if err != nil {
			t.Fatal(err)
		}
		w := r.NewWindow()
		got := w.Write(strings.Repeat("word ", 20))
		if len(got) < 100-32 || len(got) > 100-16 {
			t.Errorf("got %d bytes released, want between %d and %d", len(got), 100-32, 100-16)
		}
	})
}

// rulesUnderTest are the rule sets the property and fuzz tests run.
func rulesUnderTest(t testing.TB) []*Rules {
	pii, err := Compile(Config{PII: true, Terms: []string{"falcon", "Project X"}, MaxMatchBytes: 256, MaxRunBytes: 64,
		Patterns: []Pattern{{Name: "ticket", Regex: `ACME-\d{4,8}`}, {Name: "ssn", Regex: `\b\d{3}-\d{2}-\d{4}\b`}, {Name: "word", Regex: `(?i)zz[a-z]*q`}}, WindowBytes: 32})
	if err != nil {
		t.Fatal(err)
	}
	small, err := Compile(Config{MaxMatchBytes: 64, MaxRunBytes: 16, WindowBytes: 16, Patterns: []Pattern{{Name: "dots", Regex: `\.\.+`}}})
	if err != nil {
		t.Fatal(err)
	}
	return []*Rules{Default(), pii, small, nil}
}

// checkSplit streams text through r in the given pieces and checks the window contract.
func checkSplit(t testing.TB, r *Rules, text string, cuts []int) {
	t.Helper()
	whole := r.Redact(text)
	w := r.NewWindow()
	var b strings.Builder
	last := 0
	validIn := utf8.ValidString(text)
	for _, c := range append(cuts, len(text)) {
		s := w.Write(text[last:c])
		if validIn && !utf8.ValidString(s) {
			t.Fatalf("release %q splits a UTF-8 sequence (text %q, cuts %v)", s, text, cuts)
		}
		b.WriteString(s)
		last = c
	}
	s := w.Flush()
	if validIn && !utf8.ValidString(s) {
		t.Fatalf("flush %q is not valid UTF-8", s)
	}
	b.WriteString(s)
	if got := b.String(); got != whole {
		t.Fatalf("streamed: got %q, want Redact(whole) %q (text %q, cuts %v)", got, whole, text, cuts)
	}
}

var plantable = []string{fakeOpenAI, fakeOpenAIOld, fakeAnthropic, fakeGoogle, fakeAWSID, fakeGitHub, fakeGitHubPAT,
	fakeGitLab, fakeSlack, fakeStripe, fakeJWT, fakePEM, "Bearer " + fakeBearerTok, "AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret}

var plantablePII = []string{fakeCard, fakeCardDashed, fakeIBAN, fakeIBANPlain, fakePhone, "jane.doe@example.com"}

// secretPart returns the part of a planted string that must not survive.
func secretPart(s string) string {
	for _, p := range []string{"Bearer ", "AWS_SECRET_ACCESS_KEY="} {
		s = strings.TrimPrefix(s, p)
	}
	if strings.HasPrefix(s, "-----BEGIN") {
		return fakePEMBody[:20]
	}
	return s
}

// randomText builds text from words, punctuation, CJK, digits and near-miss prefixes, with
// planted secrets separated by spaces.
func randomText(rng *rand.Rand, plant []string) (string, []string) {
	atoms := []string{"the ", "answer", " ", "  ", "\n", "sk-", "sk", "-", "task-", "ask", "AKIA", "A", "eyJ", ".", "ghp_",
		"Bearer ", "bearer", "-----BEGIN ", "-----END ", "PRIVATE KEY-----", "\n-----", "postgres://", "u:p@h", "@", "a@b.co",
		"4111", " 1111", "+1 ", "415", " 555 ", "0100", "DE89", " 3704", "漢字", "かな", "é", "ACME-", "1234", "123-45-6789",
		"falcon", "Project X", "zzq", "...", "\"", "=", ":", "aws_secret_access_key", "Authorization: ", "xoxb-", "9", "Z", "_"}
	var b strings.Builder
	var planted []string
	n := rng.Intn(40)
	for k := 0; k < n; k++ {
		if len(plant) > 0 && rng.Intn(10) == 0 {
			s := plant[rng.Intn(len(plant))]
			b.WriteString(" " + s + " ")
			planted = append(planted, secretPart(s))
			continue
		}
		b.WriteString(atoms[rng.Intn(len(atoms))])
	}
	return b.String(), planted
}

func randomCuts(rng *rand.Rand, n int) []int {
	var cuts []int
	for c := 0; c < n; {
		c += 1 + rng.Intn(12)
		if c < n {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

func TestSplitInvariant(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	rules := rulesUnderTest(t)
	for iter := 0; iter < 3000; iter++ {
		text, _ := randomText(rng, append(plantable, plantablePII...))
		for _, r := range rules {
			checkSplit(t, r, text, randomCuts(rng, len(text)))
			var every []int // one byte at a time
			for c := 1; c < len(text); c++ {
				every = append(every, c)
			}
			checkSplit(t, r, text, every)
		}
	}
}

func TestPlantedSecretsMasked(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pii, err := Compile(Config{PII: true})
	if err != nil {
		t.Fatal(err)
	}
	for iter := 0; iter < 2000; iter++ {
		text, planted := randomText(rng, plantable)
		out := Default().Redact(text)
		for _, s := range planted {
			if strings.Contains(out, s) {
				t.Fatalf("secret %q survived in %q (text %q)", s, out, text)
			}
		}
		text, planted = randomText(rng, plantablePII)
		out = pii.Redact(text)
		for _, s := range planted {
			if strings.Contains(out, s) {
				t.Fatalf("PII %q survived in %q (text %q)", s, out, text)
			}
		}
	}
}
