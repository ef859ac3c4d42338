package redact

import (
	"encoding/json"
	"testing"
)

func TestRedactJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"value", `{"city": "Paris", "key": "` + fakeOpenAI + `"}`, `{"city": "Paris", "key": "[REDACTED:openai_key]"}`},
		{"inside prose value", `{"note":"use ` + fakeAWSID + ` here"}`, `{"note":"use [REDACTED:aws_access_key] here"}`},
		{"key", `{"` + fakeGitHub + `": 1}`, `{"[REDACTED:github_token]": 1}`},
		{"escaped secret", `{"k":"sk\u002dproj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"}`, `{"k":"[REDACTED:openai_key]"}`},
		{"pem with newlines", `{"pem":"-----BEGIN PRIVATE KEY-----\nMIIabc\n-----END PRIVATE KEY-----"}`, `{"pem":"[REDACTED:private_key]"}`},
		{"nothing to mask", `{"a": [1, "two", {"b": null}]}`, `{"a": [1, "two", {"b": null}]}`},
		{"escapes kept", `{"q":"say \"hi\" <b>","k":"` + fakeOpenAI + `"}`, `{"q":"say \"hi\" <b>","k":"[REDACTED:openai_key]"}`},
		{"invalid json", `{"key": "` + fakeOpenAI, `{"key": "[REDACTED:openai_key]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Default().RedactJSON(tt.in)
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid([]byte(got)) {
				t.Errorf("got invalid JSON %s", got)
			}
		})
	}
}
