package rerank

import (
	"fmt"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name, raw     string
		units, tokens int
		ok            bool
	}{
		{"cohere", `{"results":[],"meta":{"billed_units":{"search_units":2}}}`, 2, 0, true},
		{"jina", `{"model":"jina-reranker-v2","results":[],"usage":{"total_tokens":38}}`, 0, 38, true},
		{"none", `{"results":[]}`, 0, 0, false},
	}
	for _, tt := range tests {
		u, ok := Usage([]byte(tt.raw))
		if ok != tt.ok || u.Units != tt.units || u.PromptTokens != tt.tokens {
			t.Errorf("%s: got %+v %v", tt.name, u, ok)
		}
	}
}

func TestDecodeDocuments(t *testing.T) {
	if _, _, err := Decode([]byte(`{"model":"m","query":"q","documents":["a",{"text":"b"}],"top_n":1,"rank_fields":["text"]}`)); err != nil {
		t.Errorf("strings and Jina's objects: %v", err)
	}
	many := `{"model":"m","query":"q","documents":[` + strings.Repeat(`"d",`, MaxDocuments) + `"d"]}`
	for _, body := range []string{many, `{"model":"m","query":"q","documents":[{"title":"no text"}]}`} {
		if _, _, err := Decode([]byte(body)); err == nil || !strings.Contains(fmt.Sprint(err), "documents") {
			t.Errorf("%.60s: %v, want an error on documents", body, err)
		}
	}
}
