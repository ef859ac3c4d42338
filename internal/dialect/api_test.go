package dialect

import (
	"net/http/httptest"
	"testing"
)

func TestSecret(t *testing.T) {
	all := Bearer | XAPIKey | XGoogAPIKey | KeyQuery
	tests := []struct {
		name   string
		in     Credential
		url    string
		header []string
		want   string
	}{
		{"bearer", all, "/", []string{"Authorization", "Bearer sk-1"}, "sk-1"},
		{"bearer lower case", all, "/", []string{"Authorization", "bearer sk-1"}, "sk-1"},
		{"x-api-key", all, "/", []string{"X-Api-Key", "sk-2"}, "sk-2"},
		{"bearer wins", all, "/", []string{"Authorization", "Bearer sk-1", "X-Api-Key", "sk-2"}, "sk-1"},
		{"basic is no key", all, "/", []string{"Authorization", "Basic abc"}, ""},
		{"none", all, "/", nil, ""},
		{"x-goog-api-key", all, "/", []string{"X-Goog-Api-Key", " g-1 "}, "g-1"},
		{"query", all, "/v1beta/models?key=q-1", nil, "q-1"},
		{"header before query", all, "/?key=q-1", []string{"X-Goog-Api-Key", "g-1"}, "g-1"},
		{"bearer not taken", XAPIKey, "/", []string{"Authorization", "Bearer sk-1"}, ""},
		{"x-api-key not taken", Bearer, "/", []string{"X-Api-Key", "sk-2"}, ""},
		{"query not taken", Bearer | XAPIKey, "/?key=q-1", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.url, nil)
			for i := 0; i+1 < len(tt.header); i += 2 {
				r.Header.Set(tt.header[i], tt.header[i+1])
			}
			if got := tt.in.Secret(r); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDecodedOf: a decoding that names its op (Gemini's :countTokens on a Call route) is
// served by it; else by the route's.
func TestDecodedOf(t *testing.T) {
	if got := (&Decoded{}).Of(Call); got != Call {
		t.Errorf("no op of its own: got %d, want Call", got)
	}
	if got := (&Decoded{Op: Count}).Of(Call); got != Count {
		t.Errorf("its own op: got %d, want Count", got)
	}
}
