package gemini

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

func intp(n int) *int           { return &n }
func floatp(f float64) *float64 { return &f }

// TestEncodeRequest is the golden translation of requests into streamGenerateContent
// bodies (testdata/request/*.json; -update rewrites them).
func TestEncodeRequest(t *testing.T) {
	weather := llm.Tool{Name: "get_weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	tests := []struct {
		name string
		req  llm.Request
	}{
		{name: "text", req: llm.Request{MaxTokens: intp(100), Temperature: floatp(1.2), TopP: floatp(0.9), Stop: []string{"END"}, N: 2,
			Extra:    []llm.Field{{Name: "top_k", Value: json.RawMessage(`40`)}, {Name: "presence_penalty", Value: json.RawMessage(`0.5`)}},
			Messages: []llm.Message{text(llm.RoleSystem, "Be brief."), text(llm.RoleUser, "hi"), text(llm.RoleAssistant, "hello"), text(llm.RoleUser, "again")}}},
		// A function-calling turn handed back: the thought signature returns on the part it
		// came on (the first call), the ids Gemini gave none are not sent, the results are
		// named after their calls.
		{name: "tools round trip", req: llm.Request{Tools: []llm.Tool{weather}, ToolChoice: json.RawMessage(`"auto"`),
			Extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"low"`)}},
			Messages: []llm.Message{text(llm.RoleUser, "Weather in Paris and Tokyo?"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "Checking both cities."}},
					ToolCalls: []llm.ToolCall{{ID: "gemini_call_r-par-1_0_0", Name: "get_weather", Arguments: `{"city":"Paris"}`},
						{ID: "call_from_vertex", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}},
					Reasoning: []llm.Reasoning{{ID: "gemini_call_r-par-1_0_0", Encrypted: "CiQBVKhc7sig-paris"}, {Text: "summary only"}}},
				{Role: llm.RoleTool, ToolCallID: "gemini_call_r-par-1_0_0", Parts: []llm.Part{{Type: llm.PartText, Text: `{"temp":18}`}}},
				{Role: llm.RoleTool, ToolCallID: "call_from_vertex", Parts: []llm.Part{{Type: llm.PartText, Text: "rainy"}}}}}},
		{name: "named tool and schema", req: llm.Request{Tools: []llm.Tool{weather, {Name: "now"}},
			ToolChoice:     json.RawMessage(`{"type":"function","function":{"name":"get_weather"}}`),
			ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"w","schema":{"type":"object","properties":{"t":{"type":"number"}}}}}`),
			Messages:       []llm.Message{text(llm.RoleUser, "x")}}},
		{name: "text signature and images", req: llm.Request{Extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"none"`)}},
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "What is this?"},
				{Type: llm.PartImage, URL: "data:image/png;base64,iVBORw0KGgo="}, {Type: llm.PartImage, URL: "gs://bucket/cat.png"}}},
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "A cat."}}, Reasoning: []llm.Reasoning{{Encrypted: "EqsFCqgF"}}},
				text(llm.RoleUser, "Sure?")}}},
		// Bytes inline, a URL and a Files API file as file data.
		{name: "files and audio", req: llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartText, Text: "Summarise and transcribe."},
			{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Filename: "a.pdf"},
			{Type: llm.PartFile, URL: "https://example.com/b.pdf", MediaType: "application/pdf"},
			{Type: llm.PartFile, FileID: "https://generativelanguage.googleapis.com/v1beta/files/abc", FileOf: "gemini", MediaType: "audio/mp3"},
			{Type: llm.PartAudio, Data: "UklGRg==", MediaType: "audio/wav"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Model = testModel
			b, err := encodeRequest(&tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			json.Indent(&out, b, "", "  ")
			out.WriteByte('\n')
			providertest.Golden(t, filepath.Join("testdata", "request", strings.ReplaceAll(tt.name, " ", "-")+".json"), out.String(), *update)
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
		{"logprobs", llm.Request{Logprobs: true}, llm.Unsupported, "logprobs"},
		{"unknown call", llm.Request{Messages: []llm.Message{{Role: llm.RoleTool, ToolCallID: "x"}}}, llm.Invalid, "messages"},
		{"arguments cut", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: `{"city":`}}}}}, llm.Invalid, "messages"},
		{"arguments not an object", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: `"x"`}}}}}, llm.Invalid, "messages"},
		{"bad data url", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, URL: "data:image/png,raw"}}}}}, llm.Invalid, "messages"},
		{"allowed_tools", llm.Request{Tools: []llm.Tool{{Name: "f"}}, ToolChoice: json.RawMessage(`{"type":"allowed_tools"}`)}, llm.Unsupported, "tool_choice"},
		{"openai file", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartFile, FileID: "file-1", FileOf: "openai"}}}}}, llm.Unsupported, "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := encodeRequest(&tt.req)
			if le := wantKind(t, err, tt.kind); le.Status != 400 || le.Param != tt.param {
				t.Errorf("got %+v", le)
			}
		})
	}
}

// TestSignatureRoundTrip: a function-calling answer as the stream gave it, handed back as
// the relay assembles it, puts its thought signature back on the first call's part, which
// Gemini requires of a function-calling turn.
func TestSignatureRoundTrip(t *testing.T) {
	u := upstream(t, providertest.SSE(sseBody(t, filepath.Join("testdata", "gemini-parallel-tool-calls.chunks.txt"))))
	s, err := client(u, Config{}).Stream(t.Context(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := providertest.Drain(t, s)
	s.Close()
	c := providertest.Assemble(evs).Choices[0]
	req := llm.Request{Model: testModel, Messages: []llm.Message{text(llm.RoleUser, "q"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: c.Text}}, ToolCalls: c.ToolCalls, Reasoning: c.Opaque},
		{Role: llm.RoleTool, ToolCallID: c.ToolCalls[0].ID, Parts: []llm.Part{{Type: llm.PartText, Text: "18C"}}},
		{Role: llm.RoleTool, ToolCallID: c.ToolCalls[1].ID, Parts: []llm.Part{{Type: llm.PartText, Text: "rain"}}}}}
	b, err := encodeRequest(&req)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Contents []struct {
			Parts []struct {
				FunctionCall     *struct{ ID, Name string } `json:"functionCall"`
				FunctionResponse *struct{ ID, Name string } `json:"functionResponse"`
				ThoughtSignature string                     `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	json.Unmarshal(b, &w)
	model, results := w.Contents[1].Parts, w.Contents[2].Parts
	if len(model) != 3 || model[1].FunctionCall == nil || model[1].ThoughtSignature != "CiQBVKhc7sig-paris" || model[1].FunctionCall.ID != "" ||
		model[2].ThoughtSignature != "" || len(results) != 2 || results[1].FunctionResponse.Name != "get_weather" {
		t.Fatalf("got %s", b)
	}
}
