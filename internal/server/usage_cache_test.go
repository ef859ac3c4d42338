package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cacheStream is an Anthropic Messages stream, in the wire's own framing, that reports cache
// reads and writes: 1000 plain prompt tokens, 3000 written to the cache, 6000 read from it.
const cacheStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"cache_creation_input_tokens":3000,"cache_read_input_tokens":6000,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":500}}

event: message_stop
data: {"type":"message_stop"}

`

// The prompt cache's reads and writes reach /admin/usage apart, priced at the built-in
// table's claude-sonnet-4-5 rates (issue 46), with what the cache saved.
func TestUsageCacheTokens(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, cacheStream)
	}))
	t.Cleanup(up.Close)
	yaml := `
providers:
  anth: {kind: anthropic, base_url: "${ANTH}", api_key: test}
models:
  claude: [anth/claude-sonnet-4-5-20250929]
auth: {admin_token: ` + admin + `}
`
	gw := serveGate(t, yaml, map[string]string{"ANTH": up.URL}, time.Hour, nil)
	_, secret := createKey(t, gw, admin, `{"name":"cache"}`)
	for range 2 {
		if r := do(t, "POST", gw+"/v1/chat/completions", secret, chatBody("claude", true, "")); r.status != 200 || strings.Contains(string(r.body), `"error"`) {
			t.Fatalf("got %d %s, want an answer", r.status, r.body)
		}
	}
	r := do(t, "GET", gw+"/admin/usage?group_by=alias&from="+time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")+
		"&to="+time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02"), admin, "")
	body := string(r.body)
	// By hand, for each call, in nano-USD (rate × 1000 a token): input 3, cache read 0.30,
	// 5-minute write 3.75, output 15; saved: the reads' 2.70 discount less the writes' 0.75.
	cost := 2 * (1000*3000 + 6000*300 + 3000*3750 + 500*15000)
	saved := 2 * (6000*(3000-300) - 3000*(3750-3000))
	for _, want := range []string{`"input_tokens":20000`, `"cache_read_tokens":12000`, `"cache_write_tokens":6000`, `"cache_write_1h_tokens":0`,
		`"cost_usd":` + usd(cost), `"saved_usd":` + usd(saved)} {
		if !strings.Contains(body, `"alias":"claude","requests":2,`) || !strings.Contains(body, want) {
			t.Errorf("got %s, want the claude line with %s", body, want)
		}
	}
}

// usd writes nano-USD as encoding/json writes the USD figure.
func usd(nano int) string { return strconv.FormatFloat(float64(nano)/1e9, 'f', -1, 64) }
