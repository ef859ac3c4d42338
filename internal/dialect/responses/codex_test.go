package responses

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// codexBody is a second-round request as Codex CLI 0.169.0 sends it to a custom provider
// with wire_api = "responses": function, namespace, hosted and custom tools, a custom call
// and a web search call in the input, client_metadata, prompt_cache_key, include, store.
func codexBody(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/codex-0.169.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// The Codex body decodes: its members are kept as they came, and the llm request says the
// same in terms every adapter reads (flattened namespace, custom as a function of "input",
// the hosted tool marked, the web search call left to the Responses upstream).
func TestDecodeCodex(t *testing.T) {
	body := codexBody(t)
	rr, err := Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	// Native is the body member by member, raw: joined again, it is the body.
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range rr.Req.Native.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + f.Name + `":`)
		b.Write(f.Value)
	}
	b.WriteByte('}')
	if !bytes.Equal(b.Bytes(), body) {
		t.Errorf("native members joined:\n%s\nwant the body:\n%s", b.Bytes(), body)
	}
	var tools []string
	for _, tl := range rr.Req.Tools {
		tools = append(tools, string(rune('0'+tl.Kind))+":"+tl.Name+":"+tl.Namespace)
	}
	if got, want := strings.Join(tools, " "), "0:exec_command: 0:write_stdin: 0:update_plan: 0:view_image: 0:mcp__docs__search:mcp__docs 2:web_search: 1:apply_patch:"; got != want {
		t.Errorf("got tools %s, want %s", got, want)
	}
	var calls []string
	for _, m := range rr.Req.Messages {
		for _, tc := range m.ToolCalls {
			calls = append(calls, tc.ID+" "+tc.Name+" "+tc.Arguments)
		}
		if m.Role == llm.RoleTool {
			calls = append(calls, "out "+m.ToolCallID)
		}
	}
	want := []string{`call_exec_1 exec_command {"cmd":"echo sluice-ok","yield_time_ms":1000}`, "out call_exec_1",
		`call_patch_1 apply_patch {"input":"*** Begin Patch\n*** Add File: notes.txt\n+sluice\n*** End Patch\n"}`, "out call_patch_1",
		`call_mcp_1 mcp__docs__search {"query":"gateway"}`, "out call_mcp_1"}
	sameJSON(t, "calls", calls, want)
	if rr.Req.Store == nil || *rr.Req.Store || len(rr.Req.Include) != 1 || string(rr.Req.ToolChoice) != `"auto"` {
		t.Errorf("got store %v include %v tool_choice %s", rr.Req.Store, rr.Req.Include, rr.Req.ToolChoice)
	}
	// Chat Completions takes safety_identifier; client_metadata is Native only;
	// prompt_cache_key is modelled, and names the conversation (issue 46).
	var extra []string
	for _, f := range rr.Req.Extra {
		extra = append(extra, f.Name)
	}
	if got := strings.Join(extra, ","); got != "parallel_tool_calls,reasoning_effort,verbosity,safety_identifier" {
		t.Errorf("got extra %s", got)
	}
	if k := "019a7c3e-5b1d-7f52-9d0e-3c2b1a0f9e8d"; rr.Req.PromptCacheKey != k || rr.Req.Session != k {
		t.Errorf("got prompt_cache_key %q session %q, want %s", rr.Req.PromptCacheKey, rr.Req.Session, k)
	}
	// Each tool, as a function: the namespace's is already one; custom takes one string.
	fn, err := rr.Req.Tools[6].Function()
	if err != nil || !strings.Contains(fn.Description, "lark grammar:\nstart: begin_patch") ||
		string(fn.Parameters) != customParams {
		t.Errorf("got %+v, %v, want apply_patch as a function of input with its grammar", fn, err)
	}
	if _, err := rr.Req.Tools[5].Function(); llm.KindOf(err) != llm.Unsupported || !strings.Contains(err.Error(), "web_search") {
		t.Errorf("got %v, want web_search Unsupported by name", err)
	}
}

const customParams = `{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input."}},"required":["input"],"additionalProperties":false}`

// Calls go back to Codex in its terms: a namespace's function under its own name and
// namespace, a custom tool's call as a custom_tool_call with its input, a raw item as it
// came; streamed and in the Response object.
func TestWireCodexCalls(t *testing.T) {
	rr, err := Decode(codexBody(t))
	if err != nil {
		t.Fatal(err)
	}
	events := []llm.Event{
		{Type: llm.EvItem, Tool: llm.ToolDelta{Index: 0}, Raw: json.RawMessage(`{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}`)},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 1, ID: "call_1", Name: "mcp__docs__search", Args: `{"query":"x"}`}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 2, ID: "call_2", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** End Patch\n"}`}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 3, ID: "call_3", Name: "exec_command", Args: `{"cmd":"ls"}`}},
		{Type: llm.EvDone, Finish: "tool_calls"},
	}
	rec := httptest.NewRecorder()
	ew := sse.NewWriter(rec, sse.WriterOptions{})
	_ = ew.Start(func(http.Header) {})
	w := NewWire("r1", 7, rr)
	s, err := w.Open(ew, "gpt-5.1-codex")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if err := s.Event(&ev); err != nil {
			t.Fatal(err)
		}
	}
	ew.Close()
	var frames []string
	for _, f := range strings.Split(rec.Body.String(), "\n\n") {
		if i := strings.Index(f, "\ndata: "); i >= 0 && !strings.Contains(f, "response.created") && !strings.Contains(f, "response.in_progress") {
			frames = append(frames, f[i+len("\ndata: "):])
		}
	}
	ws := `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}`
	want := []string{
		`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":` + ws + `}`,
		`{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":` + ws + `}`,
		`{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"id":"fc_r1_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"search","namespace":"mcp__docs"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_r1_1","output_index":1,"delta":"{\"query\":\"x\"}"}`,
		`{"type":"response.function_call_arguments.done","sequence_number":6,"item_id":"fc_r1_1","output_index":1,"name":"search","arguments":"{\"query\":\"x\"}"}`,
		`{"type":"response.output_item.done","sequence_number":7,"output_index":1,"item":{"id":"fc_r1_1","type":"function_call","status":"completed","arguments":"{\"query\":\"x\"}","call_id":"call_1","name":"search","namespace":"mcp__docs"}}`,
		`{"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{"id":"ctc_r1_2","type":"custom_tool_call","status":"in_progress","call_id":"call_2","input":"","name":"apply_patch"}}`,
		`{"type":"response.custom_tool_call_input.delta","sequence_number":9,"item_id":"ctc_r1_2","output_index":2,"delta":"*** Begin Patch\n*** End Patch\n"}`,
		`{"type":"response.custom_tool_call_input.done","sequence_number":10,"item_id":"ctc_r1_2","output_index":2,"input":"*** Begin Patch\n*** End Patch\n"}`,
		`{"type":"response.output_item.done","sequence_number":11,"output_index":2,"item":{"id":"ctc_r1_2","type":"custom_tool_call","status":"completed","call_id":"call_2","input":"*** Begin Patch\n*** End Patch\n","name":"apply_patch"}}`,
		`{"type":"response.output_item.added","sequence_number":12,"output_index":3,"item":{"id":"fc_r1_3","type":"function_call","status":"in_progress","arguments":"","call_id":"call_3","name":"exec_command"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":13,"item_id":"fc_r1_3","output_index":3,"delta":"{\"cmd\":\"ls\"}"}`,
		`{"type":"response.function_call_arguments.done","sequence_number":14,"item_id":"fc_r1_3","output_index":3,"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}`,
		`{"type":"response.output_item.done","sequence_number":15,"output_index":3,"item":{"id":"fc_r1_3","type":"function_call","status":"completed","arguments":"{\"cmd\":\"ls\"}","call_id":"call_3","name":"exec_command"}}`,
	}
	sameJSON(t, "frames", frames, want)

	// Not streamed: the same items in the Response object's output.
	s = w.Attempt("gpt-5.1-codex")
	for _, ev := range events {
		if err := s.Event(&ev); err != nil {
			t.Fatal(err)
		}
	}
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	body := w.Body("", &llm.Response{})
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Output) != 4 {
		t.Fatalf("got %s, %v", body, err)
	}
	if string(resp.Output[0]) != ws || !strings.Contains(string(resp.Output[1]), `"name":"search","namespace":"mcp__docs"`) ||
		!strings.Contains(string(resp.Output[2]), `"type":"custom_tool_call","status":"completed","call_id":"call_2","input":"*** Begin Patch\n*** End Patch\n"`) {
		t.Errorf("got output %s", body)
	}
}

// Codex's view_image answers with an image in the function call's output: accepted, as the
// Responses API accepts it.
func TestDecodeOutputImage(t *testing.T) {
	rr, err := Decode([]byte(`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"view_image","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"seen"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"},{"type":"input_file","file_id":"f"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Part{{Type: llm.PartText, Text: "seen"}, {Type: llm.PartImage, URL: "data:image/png;base64,AAAA"}}
	sameJSON(t, "output", rr.Req.Messages[1].Parts, want)
	if _, err := Decode([]byte(`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"video"}]}]}`)); err == nil {
		t.Error("got a video part accepted, want a 400")
	}
}

// What lives in OpenAI's store (a conversation, a stored prompt, an item_reference, a file)
// is not refused: the request is kept to Responses targets, which NativeOnly names.
func TestDecodeNativeOnly(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"model":"m","input":"hi"}`, ""},
		{`{"model":"m","previous_response_id":"resp_1"}`, "previous_response_id"},
		{`{"model":"m","conversation":"conv_1"}`, "conversation"},
		{`{"model":"m","prompt":{"id":"pmpt_1"},"input":"hi"}`, "prompt"},
		{`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]"},
		// An OpenAI file is a file part every OpenAI target can send (internal/provider/openai).
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`, ""},
		{`{"model":"m","input":[{"role":"system","content":[{"type":"input_file","file_id":"f"}]}]}`, "input[0].content[0]"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","file_id":"file_1"}]}]}`, "input[0].content[1].file_id"},
	} {
		rr, err := Decode([]byte(tt.body))
		if err != nil {
			t.Errorf("%s: got %v", tt.body, err)
		} else if rr.NativeOnly() != tt.want {
			t.Errorf("%s: got %q, want %q", tt.body, rr.NativeOnly(), tt.want)
		}
	}
}

// A namespace's function whose flat name is over 64 characters is the Responses API's to
// judge: accepted, and refused only for the wires whose names it overflows.
func TestDecodeLongFlatName(t *testing.T) {
	ns, fn := strings.Repeat("n", 40), strings.Repeat("f", 30)
	rr, err := Decode([]byte(`{"model":"m","input":"hi","tools":[{"type":"namespace","name":"` + ns + `","tools":[{"type":"function","name":"` + fn + `"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Req.Tools[0].Function(); llm.KindOf(err) != llm.Unsupported || !strings.Contains(err.Error(), "64 characters") {
		t.Errorf("got %v, want Unsupported for its flat name", err)
	}
}
