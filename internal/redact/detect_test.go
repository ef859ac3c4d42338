package redact

import (
	"strings"
	"testing"
)

// Fake secrets in realistic shapes. None is real.
var (
	fakeOpenAI     = "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	fakeOpenAIOld  = "sk-" + strings.Repeat("aB3dE5", 8)
	fakeAnthropic  = "sk-ant-api03-" + strings.Repeat("Zx9_Qw2-", 11) + "AA"
	fakeGoogle     = "AIza" + "SyD-1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTu"
	fakeAWSID      = "AKIAIOSFODNN7EXAMPLE"
	fakeAWSSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	fakeGitHub     = "ghp_" + strings.Repeat("aB3", 12)
	fakeGitHubPAT  = "github_pat_11ABCDEFG0" + strings.Repeat("x1Y_", 15)
	fakeGitLab     = "glpat-" + "xY7zQ2wE9rT4uI1oP3aS"
	fakeSlack      = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeStripe     = "sk_live_" + "51HqLyjWDarjtT1zdp7dcXyz"
	fakeJWT        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakeBearerTok  = "mF_9.B5f-4.1JqM" + "x7Kq2Lp9"
	fakePEMBody    = "MIIEowIBAAKCAQEA1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVwXyZ+/abcdefghij\nQWERTYuiop1234567890asdfghjklZXCVBNM+/qwertyuiopASDFGHJKL==\n"
	fakePEM        = "-----BEGIN RSA PRIVATE KEY-----\n" + fakePEMBody + "-----END RSA PRIVATE KEY-----"
	fakeCard       = "4111 1111 1111 1111"
	fakeCardDashed = "5500-0000-0000-0004"
	fakeCardPlain  = "378282246310005"
	fakeIBAN       = "DE89 3704 0044 0532 0130 00"
	fakeIBANPlain  = "GB82WEST12345698765432"
	fakePhone      = "+1 415 555 0100"
)

func TestDetectors(t *testing.T) {
	pii, err := Compile(Config{PII: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		want string
	}{
		// True positives, one or more per detector.
		{"openai project key", "key: " + fakeOpenAI + ".", "key: [REDACTED:openai_key]."},
		{"openai legacy key", `OPENAI_API_KEY="` + fakeOpenAIOld + `"`, `OPENAI_API_KEY="[REDACTED:openai_key]"`},
		{"openai service account", "sk-svcacct-" + strings.Repeat("Ab1", 10), "[REDACTED:openai_key]"},
		{"anthropic key", "use " + fakeAnthropic + " now", "use [REDACTED:anthropic_key] now"},
		{"google key", "google=" + fakeGoogle, "google=[REDACTED:google_api_key]"},
		{"aws access key", "id " + fakeAWSID + " ok", "id [REDACTED:aws_access_key] ok"},
		{"aws temp key", "ASIA" + "Y34FZKBOKMUTVV7A", "[REDACTED:aws_access_key]"},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret, "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]"},
		{"aws secret ini", "aws_secret_access_key = " + fakeAWSSecret + "\n", "aws_secret_access_key = [REDACTED:aws_secret_key]\n"},
		{"aws secret quoted", `aws_secret_access_key = "` + fakeAWSSecret + `"`, `aws_secret_access_key = "[REDACTED:aws_secret_key]"`},
		{"aws secret json", `{"SecretAccessKey": "` + fakeAWSSecret + `"}`, `{"SecretAccessKey": "[REDACTED:aws_secret_key]"}`},
		{"github classic", "token " + fakeGitHub, "token [REDACTED:github_token]"},
		{"github fine grained", fakeGitHubPAT, "[REDACTED:github_token]"},
		{"gitlab", "GITLAB_TOKEN=" + fakeGitLab, "GITLAB_TOKEN=[REDACTED:gitlab_token]"},
		{"slack", "slack: " + fakeSlack, "slack: [REDACTED:slack_token]"},
		{"stripe", "stripe " + fakeStripe, "stripe [REDACTED:stripe_key]"},
		{"jwt", "jwt=" + fakeJWT + " end", "jwt=[REDACTED:jwt] end"},
		{"bearer", "Authorization header Bearer " + fakeBearerTok + " sent", "Authorization header Bearer [REDACTED:bearer] sent"},
		{"authorization basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==\nnext", "Authorization: [REDACTED:bearer]\nnext"},
		{"authorization json", `{"authorization": "Bearer ` + fakeBearerTok + `"}`, `{"authorization": "[REDACTED:bearer]"}`},
		{"pem", "here:\n" + fakePEM + "\ndone", "here:\n[REDACTED:private_key]\ndone"},
		{"openssh pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private_key]"},
		{"postgres url", "DATABASE_URL=postgres://app:s3cr3t-Pw@db.internal:5432/app", "DATABASE_URL=postgres://app:[REDACTED:database_url]@db.internal:5432/app"},
		{"mongodb srv", "mongodb+srv://admin:hunter2@cluster0.example.net/x", "mongodb+srv://admin:[REDACTED:database_url]@cluster0.example.net/x"},
		{"redis no user", "redis://:p4ss@cache:6379", "redis://:[REDACTED:database_url]@cache:6379"},

		// True negatives.
		{"task- is not a key", "the task-management-system-for-everyone-2024 works", ""},
		{"sk-learn", "pip install sk-learn and scikit-learn", ""},
		{"short sk-", "sk-123 is short", ""},
		{"sk-ant- too short", "sk-ant-abc", ""},
		{"hex hash", "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", ""},
		{"md5", "md5 d41d8cd98f00b204e9800998ecf8427e", ""},
		{"uuid", "id 123e4567-e89b-12d3-a456-426614174000", ""},
		{"prose", "The bearer of bad news said: authorization is required.", ""},
		{"bearer short", "Bearer abc123", ""},
		{"akia too short", "AKIAIOSFODNN7EXAM ok", ""},
		{"akia too long", "AKIAIOSFODNN7EXAMPLEX", ""},
		{"aws secret without label", "secret " + fakeAWSSecret, ""},
		{"aws secret wrong length", "aws_secret_access_key=abc", ""},
		{"github too short", "ghp_abc", ""},
		{"jwt header only", "eyJhbGciOiJIUzI1NiJ9 alone", ""},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", ""},
		{"url without password", "postgres://app@db.internal/app and postgres://db:5432/x", ""},
		{"http url", "https://user:pass@example.com", ""},
		{"pii off by default", "mail bob@example.com, card " + fakeCard, ""},
		{"words with prefixes", "AIzaz eyJ glpat xoxb rk_live sk_test ghp_", ""},
		{"authorization prose", "Authorization: contact administrators first", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := Default().Redact(tt.in); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}

	piiTests := []struct {
		name string
		in   string
		want string
	}{
		{"email", "write to jane.doe+x@mail.example.co.uk.", "write to [REDACTED:email]."},
		{"card spaced", "card " + fakeCard + " exp", "card [REDACTED:credit_card] exp"},
		{"card dashed", "card " + fakeCardDashed, "card [REDACTED:credit_card]"},
		{"card amex plain", "amex " + fakeCardPlain + ".", "amex [REDACTED:credit_card]."},
		{"card then year", fakeCard + " 2027", "[REDACTED:credit_card] 2027"},
		{"iban grouped", "IBAN " + fakeIBAN + " thanks", "IBAN [REDACTED:iban] thanks"},
		{"iban grouped then caps", fakeIBAN + " OK", "[REDACTED:iban] OK"},
		{"iban plain", "to " + fakeIBANPlain, "to [REDACTED:iban]"},
		{"phone e164", "call " + fakePhone + " now", "call [REDACTED:phone] now"},
		{"phone us", "call (415) 555-0100 or 415-555-0100", "call [REDACTED:phone] or [REDACTED:phone]"},

		{"luhn fails", "4111 1111 1111 1112", ""},
		{"iban checksum fails", "DE88 3704 0044 0532 0130 00", ""},
		{"years and amounts", "In 2023 we sold 1,234 units for 5 000 000 EUR.", ""},
		{"version", "go 1.26.0 and v1.2.3", ""},
		{"not an email", "a@b, @home, x@localhost", ""},
		{"uuid with pii", "123e4567-e89b-12d3-a456-426614174000", ""},
		{"short number", "+1 234", ""},
	}
	for _, tt := range piiTests {
		t.Run("pii/"+tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := pii.Redact(tt.in); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		in      string
		want    string
		wantErr string
	}{
		{"detector off", Config{Detectors: map[string]bool{"openai_key": false}}, fakeOpenAI, fakeOpenAI, ""},
		{"single pii on", Config{Detectors: map[string]bool{"email": true}}, "a.b@example.com 4111111111111111", "[REDACTED:email] 4111111111111111", ""},
		{"pii key", Config{Detectors: map[string]bool{"pii": true}}, "a.b@example.com", "[REDACTED:email]", ""},
		{"unknown detector", Config{Detectors: map[string]bool{"nope": true}}, "", "", `unknown detector "nope"`},
		{"bad regex", Config{Patterns: []Pattern{{Name: "ticket", Regex: "("}}}, "", "", `pattern "ticket"`},
		{"empty regex", Config{Patterns: []Pattern{{Name: "e", Regex: "x*"}}}, "", "", "empty string"},
		{"small window", Config{WindowBytes: 4}, "", "", "window_bytes"},
		{"terms", Config{Terms: []string{"Project Falcon", "falcon"}}, "the project falcon and Falcons, FALCON!", "the [REDACTED:term] and Falcons, [REDACTED:term]!", ""},
		{"prefixed pattern", Config{Patterns: []Pattern{{Name: "ticket", Regex: `ACME-[0-9]{6}`}}}, "see ACME-123456 and ACME-12", "see [REDACTED:ticket] and ACME-12", ""},
		{"free pattern", Config{Patterns: []Pattern{{Name: "ssn", Regex: `\b\d{3}-\d{2}-\d{4}\b`}}}, "ssn 123-45-6789 ok", "ssn [REDACTED:ssn] ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Compile(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactCount(t *testing.T) {
	in := fakeOpenAI + " " + fakeAWSID + " " + fakeOpenAIOld
	got, counts := Default().RedactCount(in)
	if want := "[REDACTED:openai_key] [REDACTED:aws_access_key] [REDACTED:openai_key]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if counts["openai_key"] != 2 || counts["aws_access_key"] != 1 || len(counts) != 2 {
		t.Errorf("got counts %v, want openai_key:2 aws_access_key:1", counts)
	}
	var nilRules *Rules
	if got := nilRules.Redact(in); got != in {
		t.Errorf("nil rules: got %q, want the input", got)
	}
}

func TestDetectorNames(t *testing.T) {
	got := strings.Join(DetectorNames(), ",")
	want := "anthropic_key,aws_access_key,aws_secret_key,bearer,credit_card,database_url,email,github_token,gitlab_token,google_api_key,iban,jwt,openai_key,phone,private_key,slack_token,stripe_key"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
