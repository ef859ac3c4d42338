package redact

import (
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"The key is sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7 ok",
	"card 4111 1111 1111 1111 exp 12/27, amex 3782 822463 10005",
	"call +1 415 555 0100 or (415) 555-0100 today",
	"IBAN DE89 3704 0044 0532 0130 00 and GB82WEST12345698765432.",
	"key:\n" + fakePEM + "\nend",
	"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
	"漢字かな交じり文にはスペースがありません。秘密はsk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7です。",
	"Authorization: Bearer " + fakeJWT + "\r\n",
	"aws_secret_access_key = \"" + fakeAWSSecret + "\"",
	"postgres://app:s3cr3t@db:5432/app mongodb+srv://u:p@c.example.net",
	"task-management AKIAIOSFODNN7EXAMPLE ghp_" + strings.Repeat("aB3", 12),
	"ssn 123-45-6789, ticket ACME-123456, project falcon...",
}

// FuzzWindowSplit checks the window contract for arbitrary text and split points: the
// concatenation of releases equals Redact(whole), and every release is valid UTF-8.
func FuzzWindowSplit(f *testing.F) {
	for k, s := range fuzzSeeds {
		f.Add(s, []byte{byte(k), 7, 1, 20, 3, 64, 2})
	}
	rules := rulesUnderTest(f)
	f.Fuzz(func(t *testing.T, text string, steps []byte) {
		if len(text) > 8192 {
			return
		}
		cuts := fuzzCuts(text, steps)
		for _, r := range rules {
			checkSplit(t, r, text, cuts)
		}
	})
}

// FuzzPlantedSecret plants one secret between arbitrary texts: the contract holds and the
// secret never reaches the output.
func FuzzPlantedSecret(f *testing.F) {
	for k, s := range fuzzSeeds {
		f.Add(s, s[len(s)/2:], uint8(k), []byte{byte(k), 5, 9})
	}
	pii, err := Compile(Config{PII: true})
	if err != nil {
		f.Fatal(err)
	}
	all := append(append([]string(nil), plantable...), plantablePII...)
	f.Fuzz(func(t *testing.T, before, after string, which uint8, steps []byte) {
		if len(before) > 1024 || len(after) > 1024 {
			return
		}
		secret := all[int(which)%len(all)]
		text := before + " " + secret + " " + after
		cuts := fuzzCuts(text, steps)
		for _, r := range []*Rules{Default(), pii} {
			checkSplit(t, r, text, cuts)
		}
		r := Default()
		if int(which)%len(all) >= len(plantable) {
			r = pii
		}
		if out := r.Redact(text); strings.Contains(out, secretPart(secret)) {
			t.Fatalf("secret %q survived in %q", secretPart(secret), out)
		}
	})
}

// fuzzCuts turns a fuzzer's steps into cut points of text: each step moves 1 to 24 bytes on.
func fuzzCuts(text string, steps []byte) []int {
	var cuts []int
	for c, k := 0, 0; len(steps) > 0; k++ {
		c += 1 + int(steps[k%len(steps)])%24
		if c >= len(text) || k > 4*len(text) {
			break
		}
		cuts = append(cuts, c)
	}
	return cuts
}
