package bedrock

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func text(role llm.Role, s string) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Type: llm.PartText, Text: s}}, Plain: true}
}

// user is a request of one user message of parts.
func user(ps ...llm.Part) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: ps}}}
}

func intp(n int) *int           { return &n }
func floatp(f float64) *float64 { return &f }

// TestEncodeRequest is the golden translation of requests into ConverseStream bodies
// (testdata/request/*.json; -update rewrites them).
func TestEncodeRequest(t *testing.T) {
	weather := llm.Tool{Name: "get_weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	tests := []struct {
		name  string
		req   llm.Request
		cache bool
	}{
		{name: "text", req: llm.Request{Model: testModel, MaxTokens: intp(256), Temperature: floatp(1.5), TopP: floatp(0.9),
			Stop: []string{"END", "\n"}, Messages: []llm.Message{text(llm.RoleSystem, "Be brief."), text(llm.RoleDeveloper, "Answer in French."),
				text(llm.RoleUser, "hi"), text(llm.RoleUser, "again")}}},
		{name: "tools round trip", cache: true, req: llm.Request{Model: testModel, Tools: []llm.Tool{weather, {Name: "now"}},
			ToolChoice: json.RawMessage(`"required"`), Messages: []llm.Message{
				text(llm.RoleSystem, "You are a weather bot."),
				text(llm.RoleUser, "Weather in Paris?"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "Let me look."}},
					ToolCalls: []llm.ToolCall{{ID: "tooluse_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}, {ID: "tooluse_2", Name: "now"}}},
				{Role: llm.RoleTool, ToolCallID: "tooluse_1", Parts: []llm.Part{{Type: llm.PartText, Text: "18C"}}},
				{Role: llm.RoleTool, ToolCallID: "tooluse_2", Parts: []llm.Part{{Type: llm.PartText, Text: "noon"}}},
			}}},
		{name: "named tool", req: llm.Request{Model: testModel, Tools: []llm.Tool{weather},
			ToolChoice: json.RawMessage(`{"type":"function","function":{"name":"get_weather"}}`), Messages: []llm.Message{text(llm.RoleUser, "x")}}},
		{name: "tool choice none", req: llm.Request{Model: testModel, Tools: []llm.Tool{weather},
			ToolChoice: json.RawMessage(`"none"`), Messages: []llm.Message{text(llm.RoleUser, "x")}}},
		{name: "thinking and reasoning handed back", req: llm.Request{Model: testModel, Temperature: floatp(0.2), TopP: floatp(0.5),
			Extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"medium"`)}, {Name: "top_k", Value: json.RawMessage(`5`)}},
			Messages: []llm.Message{text(llm.RoleUser, "Count the r's."),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "3"}}, Reasoning: []llm.Reasoning{
					{Text: "s-t-r-a-w", Encrypted: "Ep0CCkgICxAB"}, {Encrypted: "cmVkYWN0ZWQ=", Redacted: true}, {Text: "another provider's, unsigned"}}},
				text(llm.RoleUser, "Sure?")}}},
		{name: "thinking within the client's limit", req: llm.Request{Model: "anthropic.claude-3-7-sonnet-20250219-v1:0", MaxCompletionTokens: intp(3000),
			Extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"high"`)}}, Messages: []llm.Message{text(llm.RoleUser, "x")}}},
		{name: "no thinking for other models", req: llm.Request{Model: "amazon.nova-pro-v1:0",
			Extra:    []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"high"`)}, {Name: "top_k", Value: json.RawMessage(`5`)}},
			Messages: []llm.Message{text(llm.RoleUser, "x")}}},
		{name: "images", req: llm.Request{Model: testModel, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartText, Text: "What is this?"},
			{Type: llm.PartImage, URL: "data:image/png;base64,iVBORw0KGgo="},
			{Type: llm.PartImage, URL: "s3://bucket/cat.jpg"}}}}}},
		// A PDF and a text file as document blocks (names without their extension and the
		// dots Converse refuses), a recording as an audio block.
		{name: "documents and audio", req: llm.Request{Model: testModel, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartText, Text: "Summarise both."},
			{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Filename: "Q3 report.v2.pdf"},
			{Type: llm.PartFile, URL: "s3://bucket/notes.txt", MediaType: "text/plain"},
			{Type: llm.PartAudio, Data: "UklGRg==", MediaType: "audio/wav"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _, err := encodeRequest(&tt.req, tt.cache)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			json.Indent(&out, b, "", "  ")
			out.WriteByte('\n')
			name := strings.ReplaceAll(tt.name, " ", "-")
			providertest.Golden(t, filepath.Join("testdata", "request", name+".json"), out.String(), *update)
		})
	}
}

func TestEncodeRequestRefuses(t *testing.T) {
	tests := []struct {
		name  string
		req   llm.Request
		kind  llm.Kind
		param string
	}{
		{"n", llm.Request{N: 3}, llm.Unsupported, "n"},
		{"logprobs", llm.Request{Logprobs: true}, llm.Unsupported, "logprobs"},
		{"json schema", llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{}}`)}, llm.Unsupported, "response_format"},
		{"http image", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, URL: "https://x/cat.png"}}}}}, llm.Unsupported, "messages"},
		{"bad base64", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, URL: "data:image/png;base64,!!"}}}}}, llm.Invalid, "messages"},
		{"tiff", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, URL: "data:image/tiff;base64,AAAA"}}}}}, llm.Invalid, "messages"},
		{"arguments cut", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: `{"city":`}}}}}, llm.Invalid, "messages"},
		{"arguments not an object", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: `[1]`}}}}}, llm.Invalid, "messages"},
		{"allowed_tools choice", llm.Request{Tools: []llm.Tool{{Name: "f"}}, ToolChoice: json.RawMessage(`{"type":"allowed_tools"}`)}, llm.Unsupported, "tool_choice"},
		{"file by http url", user(llm.Part{Type: llm.PartFile, URL: "https://x/a.pdf", MediaType: "application/pdf"}), llm.Unsupported, "messages"},
		{"openai file", user(llm.Part{Type: llm.PartFile, FileID: "file-1", FileOf: "openai"}), llm.Unsupported, "messages"},
		{"zip file", user(llm.Part{Type: llm.PartFile, Data: "AAAA", MediaType: "application/zip"}), llm.Unsupported, "messages"},
		{"aiff audio", user(llm.Part{Type: llm.PartAudio, Data: "AAAA", MediaType: "audio/aiff"}), llm.Unsupported, "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := encodeRequest(&tt.req, false)
			le := wantKind(t, err, tt.kind)
			if le.Status != 400 || le.Param != tt.param || llm.HTTPStatus(err) != 400 {
				t.Errorf("got status %d param %q, want 400 %q", le.Status, le.Param, tt.param)
			}
		})
	}
}

// TestReasoningRoundTrip: the reasoning a stream carried, handed back on the next turn as
// the relay assembles it (text, then the signature that closes it), is the reasoningText
// block with its signature that Claude on Bedrock requires before a tool result.
func TestReasoningRoundTrip(t *testing.T) {
	evs := []llm.Event{}
	for _, f := range fixtureFrames(t, filepath.Join("testdata", "bedrock-reasoning.chunks.txt")) {
		s := newStream(t.Context(), origin{name: "bedrock"}, "", testModel, nopCloser{bytes.NewReader(f)})
		for {
			ev, err := s.Recv()
			if err != nil {
				break
			}
			evs = append(evs, ev)
		}
		s.Close()
	}
	var r llm.Reasoning
	for _, e := range evs {
		if e.Type == llm.EvReasoning {
			r.Text += e.Text
			if e.Encrypted != "" {
				r.Encrypted = e.Encrypted
			}
		}
	}
	var got struct {
		ReasoningText struct{ Text, Signature string } `json:"reasoningText"`
	}
	sent := reasoningSent(t, r)
	json.Unmarshal(sent, &got)
	if !strings.HasPrefix(got.ReasoningText.Text, "Let me count the r's") || !strings.HasPrefix(got.ReasoningText.Signature, "Ep0CCkgICxAB") {
		t.Fatalf("got %s", sent)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
