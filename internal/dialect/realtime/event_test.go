package realtime

import (
	"encoding/json"
	"strings"
	"testing"
)

// holdAll is a window that holds everything until Flush, and masks "sk-secret" there.
type holdAll struct{ b strings.Builder }

func (w *holdAll) Write(p string) string { w.b.WriteString(p); return "" }
func (w *holdAll) Flush() string {
	return strings.ReplaceAll(w.b.String(), "sk-secret", "[REDACTED:key]")
}
func (w *holdAll) Counts() map[string]int { return nil }

// A secret split across deltas reaches the client masked, in the deltas and in the .done.
func TestSecretAcrossDeltas(t *testing.T) {
	o := &Options{NewWindow: func() Window { return &holdAll{} },
		RedactText: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[REDACTED:key]") }}
	f := filter{o: o}
	var got []string
	for _, d := range []string{"my sk-", "sec", "ret ok"} {
		ev, err := f.server([]byte(`{"type":"response.output_text.delta","item_id":"i","content_index":0,"delta":` + string(jsonString(d)) + `}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range ev.out {
			got = append(got, string(b))
		}
	}
	ev, err := f.server([]byte(`{"type":"response.output_text.done","item_id":"i","content_index":0,"text":"my sk-secret ok"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range ev.out {
		got = append(got, string(b))
	}
	all := strings.Join(got, "\n")
	if strings.Contains(all, "sk-secret") || strings.Count(all, "[REDACTED:key]") != 2 {
		t.Fatalf("got %s, want the secret masked in the delta and the done", all)
	}
}

// FuzzServerEvent: any upstream message is filtered without a panic, and what goes out is JSON.
func FuzzServerEvent(f *testing.F) {
	f.Add([]byte(`{"type":"response.text.delta","item_id":"a","delta":"x"}`))
	f.Add([]byte(`{"type":"response.done","response":{"usage":{"input_tokens":1}}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		fl := filter{o: &Options{NewWindow: func() Window { return &holdAll{} }, RedactText: strings.ToUpper}}
		ev, err := fl.server(msg)
		if err != nil {
			return
		}
		for _, b := range ev.out {
			if !json.Valid(b) {
				t.Fatalf("out %q is not JSON (in %q)", b, msg)
			}
		}
	})
}
