package uistream

import (
	"encoding/json"
	"strings"
	"testing"
)

// record runs fn on an encoder of version v and returns its frames.
func record(v Version, fn func(e *Encoder)) []string {
	var out []string
	e := NewEncoder(v, "run_1", 0, func(seq int64, f []byte) { out = append(out, string(f)) })
	fn(e)
	return out
}

// A restart mid-text, a tool call and the end: each version gets only what its schema allows.
func TestEncoderVersions(t *testing.T) {
	run := func(e *Encoder) {
		e.Start("msg_1", []byte(`{"runId":"run_1"}`))
		e.StartStep()
		e.Text("Let me ")
		e.Restart([]byte(`{"runId":"run_1"}`))
		e.Reasoning("think")
		e.Text("Hi.")
		e.ToolCall("call_1", "get_weather", `{"city":"Paris"}`)
		e.FinishStep()
		e.Finish("tool-calls", []byte(`{"usage":{}}`))
		e.Done()
	}
	tests := []struct {
		v    Version
		want []string
	}{
		{V7, []string{
			`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1"}}`,
			`{"type":"start-step"}`,
			`{"type":"text-start","id":"txt_1"}`,
			`{"type":"text-delta","id":"txt_1","delta":"Let me "}`,
			`{"type":"reset-step"}`,
			`{"type":"reasoning-start","id":"rsn_2"}`,
			`{"type":"reasoning-delta","id":"rsn_2","delta":"think"}`,
			`{"type":"reasoning-end","id":"rsn_2"}`,
			`{"type":"text-start","id":"txt_3"}`,
			`{"type":"text-delta","id":"txt_3","delta":"Hi."}`,
			`{"type":"text-end","id":"txt_3"}`,
			`{"type":"tool-input-start","toolCallId":"call_1","toolName":"get_weather"}`,
			`{"type":"tool-input-available","toolCallId":"call_1","toolName":"get_weather","input":{"city":"Paris"}}`,
			`{"type":"finish-step"}`,
			`{"type":"finish","finishReason":"tool-calls","messageMetadata":{"usage":{}}}`,
			`[DONE]`,
		}},
		{V5, []string{
			`{"type":"start","messageId":"msg_1","messageMetadata":{"runId":"run_1"}}`,
			`{"type":"start-step"}`,
			`{"type":"text-start","id":"txt_1"}`,
			`{"type":"text-delta","id":"txt_1","delta":"Let me "}`,
			`{"type":"text-end","id":"txt_1","providerMetadata":{"sluice":{"restarted":true}}}`,
			`{"type":"data-restart","data":{"runId":"run_1"},"transient":true}`,
			`{"type":"reasoning-start","id":"rsn_2"}`,
			`{"type":"reasoning-delta","id":"rsn_2","delta":"think"}`,
			`{"type":"reasoning-end","id":"rsn_2"}`,
			`{"type":"text-start","id":"txt_3"}`,
			`{"type":"text-delta","id":"txt_3","delta":"Hi."}`,
			`{"type":"text-end","id":"txt_3"}`,
			`{"type":"tool-input-start","toolCallId":"call_1","toolName":"get_weather"}`,
			`{"type":"tool-input-available","toolCallId":"call_1","toolName":"get_weather","input":{"city":"Paris"}}`,
			`{"type":"finish-step"}`,
			`{"type":"finish","messageMetadata":{"usage":{}}}`,
			`[DONE]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.v.String(), func(t *testing.T) {
			got := record(tt.v, run)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d frames, want %d:\n%s", len(got), len(tt.want), strings.Join(got, ""))
			}
			for i, f := range got {
				want := "id: run_1-" + itoa(i+1) + "\ndata: " + tt.want[i] + "\n\n"
				if f != want {
					t.Errorf("frame %d: got %q, want %q", i, f, want)
				}
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// Every chunk any version sends has only the fields its allow-list names.
func TestEncoderAllowList(t *testing.T) {
	list := AllowList()
	for _, v := range []Version{V5, V6, V7} {
		frames := record(v, func(e *Encoder) {
			e.Start("m", []byte(`{}`))
			e.StartStep()
			e.Text("a")
			e.Restart([]byte(`{}`))
			e.Text("b")
			e.ToolCall("c1", "t", `{"cut`)
			e.ToolCall("c2", "t", ``)
			e.Metadata([]byte(`{"usage":{}}`))
			e.FinishStep()
			e.Error("boom")
			e.Abort("stopped")
			e.Finish("stop", nil)
			e.Done()
		})
		for _, f := range frames {
			data := f[strings.Index(f, "data: ")+6 : len(f)-2]
			if data == "[DONE]" {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("%v: frame %q is not JSON", v, f)
			}
			var typ string
			_ = json.Unmarshal(m["type"], &typ)
			key := typ
			if strings.HasPrefix(typ, "data-") {
				key = DataType
			}
			fields, ok := list[v.String()][key]
			if !ok {
				t.Errorf("%v: got chunk type %q, not in the allow-list", v, typ)
				continue
			}
			for k := range m {
				if !contains(fields, k) {
					t.Errorf("%v: got field %q on %q, not in the allow-list %v", v, k, typ, fields)
				}
			}
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"": V7, "v7": V7, "v6": V6, "v5": V5} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseVersion("v4"); err == nil {
		t.Errorf("ParseVersion(v4): got no error, want one")
	}
}

func TestIsDone(t *testing.T) {
	f := record(V7, func(e *Encoder) { e.StartStep(); e.Done() })
	if IsDone([]byte(f[0])) || !IsDone([]byte(f[1])) {
		t.Errorf("IsDone: got %v %v for %q, want false true", IsDone([]byte(f[0])), IsDone([]byte(f[1])), f)
	}
}
