package objects

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSpoolRequests: a message batch's body, however malformed or large, is spooled as
// {"requests":[...]} with each request's model resolved, or refused with a 4xx (400, or
// 413 past the limit); never a panic, never half a body taken for a whole one.
func FuzzSpoolRequests(f *testing.F) {
	f.Add([]byte(`{"requests":[{"custom_id":"a","params":{"model":"claude","max_tokens":8,"messages":[]}}]}`))
	f.Add([]byte(`{"x":1,"requests":[{"custom_id":"a","params":{"model":"m"}},{"custom_id":"b","params":{"model":"n"}}],"y":[1]}`))
	f.Add([]byte(`{"requests":[{"custom_id":"a","params":{"model":"m"}}],"requests":[]}`))
	f.Add([]byte(`{"requests":[{"custom_id":"a","params":{"model":"m"}}]} {}`))
	f.Add([]byte(`{"requests":[{"custom_id":"a","params":{"model":"` + strings.Repeat("m", 300) + `"}}]}`))
	f.Add([]byte(`{"requests":[]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var out bytes.Buffer
		resolved := 0
		n, err := spoolRequests(bytes.NewReader(body), &out, 256, func(model string) (string, error) {
			resolved++
			return "up-" + model, nil
		})
		if n > 257 {
			t.Fatalf("read %d bytes past the limit of 256", n)
		}
		if err != nil {
			checkClient(t, err)
			return
		}
		var got struct {
			Requests []struct {
				CustomID string `json:"custom_id"`
				Params   struct {
					Model string `json:"model"`
				} `json:"params"`
			} `json:"requests"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("spooled %q from %q: %v", out.Bytes(), body, err)
		}
		if len(got.Requests) == 0 || len(got.Requests) != resolved {
			t.Fatalf("spooled %d requests, resolved %d, from %q", len(got.Requests), resolved, body)
		}
		for _, r := range got.Requests {
			if r.CustomID == "" || !strings.HasPrefix(r.Params.Model, "up-") {
				t.Fatalf("spooled %+v from %q: want each custom_id and resolved model", r, body)
			}
		}
	})
}
