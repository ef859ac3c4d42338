package gemini

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// okAnswer is a short streamed answer.
const okAnswer = `data: {"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}],` +
	`"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":1,"totalTokenCount":1201,"cachedContentTokenCount":1024}}` + "\r\n\r\n"

// marked is a request with a cache breakpoint (ttl 1h) on every kind of block: a system
// text, a tool, a user text, image and document, an assistant text and tool call, a tool
// result and its part. mark false gives the same request without them.
func marked(mark bool) *llm.Request {
	c := func() *llm.Cache {
		if mark {
			return &llm.Cache{TTL: "1h"}
		}
		return nil
	}
	return &llm.Request{Model: testModel,
		Tools: []llm.Tool{{Name: "ls", Parameters: json.RawMessage(`{"type":"object"}`), Cache: c()}},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: "Be terse.", Cache: c()}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "Look", Cache: c()},
				{Type: llm.PartImage, URL: "data:image/png;base64,iVBORw0KGgo=", Cache: c()},
				{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Cache: c()}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "Listing.", Cache: c()}},
				ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ls", Arguments: `{}`, Cache: c()}},
				Reasoning: []llm.Reasoning{{ID: "c1", Encrypted: "CiQBsig", Wire: "gemini"}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Parts: []llm.Part{{Type: llm.PartText, Text: "a.go", Cache: c()}}, Cache: c()},
		}}
}

// TestCacheMarksLeftOut (issue 46): Gemini caches implicitly, so a request with breakpoints
// on every kind of block is served, and its body is the one of the same request without
// them: no cache_control, cachePoint or ttl reaches Gemini or Vertex.
func TestCacheMarksLeftOut(t *testing.T) {
	for _, base := range []string{"/v1beta", "/v1/projects/p/locations/us-central1/publishers/google"} {
		t.Run(base, func(t *testing.T) {
			u := upstream(t, providertest.SSE(okAnswer))
			c := New(Config{BaseURL: u.URL + base, APIKey: testKey})
			bodies := map[bool]string{}
			for _, mark := range []bool{false, true} {
				req := marked(mark)
				if n := len(req.CacheMarks()); mark != (n == 9) {
					t.Fatalf("%d marks", n)
				}
				s, err := c.Stream(context.Background(), req)
				if err != nil {
					t.Fatalf("marks %v: %v", mark, err)
				}
				evs, end := providertest.Drain(t, s)
				s.Close()
				if r := providertest.Assemble(evs); end != io.EOF || r.Usage.CachedTokens != 1024 || r.Usage.CacheDropped != 0 {
					t.Errorf("got usage %+v, end %v", r.Usage, end)
				}
				b, _, _ := u.Last()
				bodies[mark] = string(b)
			}
			if bodies[true] != bodies[false] {
				t.Errorf("the marks changed the body:\n%s\n%s", bodies[true], bodies[false])
			}
			if low := strings.ToLower(bodies[true]); strings.Contains(low, "cache") || strings.Contains(low, "ttl") {
				t.Errorf("a marker leaked: %s", bodies[true])
			}
		})
	}
}

// TestCachedContentPassesThrough: a Gemini client's body naming its context cache reaches
// Gemini (and Vertex) byte for byte, cachedContent included, whatever the llm request says.
func TestCachedContentPassesThrough(t *testing.T) {
	const body = `{"cachedContent":"cachedContents/4d2b1a9c","contents":[{"role":"user","parts":[{"text":"And chapter 3?"}]}],` +
		`"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}}`
	for _, base := range []string{"/v1beta", "/v1/projects/p/locations/us-central1/publishers/google"} {
		t.Run(base, func(t *testing.T) {
			u := upstream(t, providertest.SSE(okAnswer))
			req := testRequest()
			req.Native = &llm.Native{Wire: "gemini", Body: json.RawMessage(body), Only: []string{"cachedContent"}}
			s, err := New(Config{BaseURL: u.URL + base, APIKey: testKey}).Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			_, end := providertest.Drain(t, s)
			s.Close()
			got, _, url := u.Last()
			if end != io.EOF || string(got) != body || !strings.HasPrefix(url, base+"/models/"+testModel+":streamGenerateContent") {
				t.Errorf("got %s at %s (end %v), want %s", got, url, end, body)
			}
		})
	}
}

// TestSignaturesBack: only Gemini's own thought signatures (or ones whose wire is unknown)
// go back as thoughtSignature; an Anthropic signature or Responses encrypted content
// would be refused, and is dropped.
func TestSignaturesBack(t *testing.T) {
	tests := []struct {
		name, wire, want string
	}{
		{"gemini", "gemini", "CiQBsig"},
		{"unknown wire", "", "CiQBsig"},
		{"anthropic", "anthropic", ""},
		{"responses", "responses", ""},
		{"bedrock", "bedrock", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := llm.Request{Model: testModel, Messages: []llm.Message{text(llm.RoleUser, "q"),
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ls", Arguments: `{}`}},
					Reasoning: []llm.Reasoning{{ID: "c1", Text: "t", Encrypted: "CiQBsig", Wire: tt.wire}}},
				{Role: llm.RoleTool, ToolCallID: "c1", Parts: []llm.Part{{Type: llm.PartText, Text: "a.go"}}}}}
			b, err := encodeRequest(&req)
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Contents []struct {
					Parts []struct {
						ThoughtSignature string `json:"thoughtSignature"`
					} `json:"parts"`
				} `json:"contents"`
			}
			json.Unmarshal(b, &w)
			if got := w.Contents[1].Parts[0].ThoughtSignature; got != tt.want {
				t.Errorf("got %q, want %q: %s", got, tt.want, b)
			}
		})
	}
}
