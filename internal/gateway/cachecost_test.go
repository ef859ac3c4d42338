package gateway_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
)

// The 20-turn agent session of issue 46's "Done means": its sizes in tokens, as the fixture
// upstreams count them (a real provider's tokenizer is theirs; the fixtures only need to be
// consistent with themselves, turn after turn).
const (
	sessionTurns  = 20
	toolsTokens   = 1500 // three tool definitions
	systemTokens  = 3000 // the agent's system prompt
	userTokens    = 200  // each user turn (a tool result, an instruction)
	replyTokens   = 150  // each answer, which the next turn carries in its history
	adminToken    = "admin-cache-cost"
	vertexClaude  = "claude-sonnet-4-5@20250929"
	bedrockClaude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// promptTokens is the prompt of turn i (1-based): tools, system, the history of the turns
// before it, and its own user turn.
func promptTokens(i int) int {
	return toolsTokens + systemTokens + (i-1)*(userTokens+replyTokens) + userTokens
}

// reported is what a fixture upstream reported for one turn, in the gateway's terms: prompt
// tokens include the cache's.
type reported struct{ prompt, read, write, output int }

// ledger records what one fixture reported, turn by turn.
type ledger struct {
	mu    sync.Mutex
	turns []reported
}

// next is the usage a provider caching the conversation reports for its next turn.
// anthropic: the previous turn's prompt up to its last breakpoint (the whole of it: Claude
// Code marks the last user turn) is read, the new part up to this turn's last breakpoint is
// written (5m). Otherwise OpenAI's implicit caching: the previous prompt is read, in whole
// 128-token blocks beyond the first 1024, and nothing is reported written.
func (l *ledger) next(anthropic bool) reported {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := len(l.turns) + 1
	r := reported{prompt: promptTokens(i), output: replyTokens}
	if i > 1 {
		prev := promptTokens(i - 1)
		switch {
		case anthropic:
			r.read = prev
		case prev >= 1024:
			r.read = 1024 + (prev-1024)/128*128
		}
	}
	if anthropic {
		r.write = r.prompt - r.read
	}
	l.turns = append(l.turns, r)
	return r
}

// cost is the direct cost in USD of what l reported, at the provider's published rates (USD
// per million tokens): plain input, cache reads, 5-minute cache writes, output.
func (l *ledger) cost(input, read, write, output float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	usd := 0.0
	for _, r := range l.turns {
		plain := r.prompt - r.read - r.write
		usd += (float64(plain)*input + float64(r.read)*read + float64(r.write)*write + float64(r.output)*output) / 1e6
	}
	return usd
}

// bedrockFixture is Bedrock's ConverseStream, answering each turn in event-stream frames with
// its usage in the metadata event (inputTokens exclude the cache's, as Bedrock counts).
func bedrockFixture(t *testing.T, l *ledger) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/model/"+bedrockClaude+"/converse-stream" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		u := l.next(true)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Write(bytes.Join([][]byte{
			bedrocktest.Frame(t, "messageStart", `{"role":"assistant"}`),
			bedrocktest.Frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Done."}}`),
			bedrocktest.Frame(t, "contentBlockStop", `{"contentBlockIndex":0}`),
			bedrocktest.Frame(t, "messageStop", `{"stopReason":"end_turn"}`),
			bedrocktest.Frame(t, "metadata", fmt.Sprintf(`{"usage":{"inputTokens":%d,"outputTokens":%d,"totalTokens":%d,"cacheReadInputTokens":%d,"cacheWriteInputTokens":%d},"metrics":{"latencyMs":100}}`,
				u.prompt-u.read-u.write, u.output, u.prompt+u.output, u.read, u.write)),
		}, nil))
	}))
	t.Cleanup(s.Close)
	return s
}

// vertexFixture is Vertex AI's streamRawPredict for a Claude model: Anthropic's Messages
// stream, its usage in message_start (input_tokens exclude the cache's) and message_delta.
// It also serves the service account's token endpoint.
func vertexFixture(t *testing.T, l *ledger) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"ya29.cache-cost","expires_in":3600,"token_type":"Bearer"}`)
			return
		}
		if r.URL.Path != "/v1/projects/proj/locations/us-east5/publishers/anthropic/models/"+vertexClaude+":streamRawPredict" ||
			r.Header.Get("Authorization") != "Bearer ya29.cache-cost" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		u := l.next(true)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`message_start`, fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_vrtx_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`,
				u.prompt-u.read-u.write, u.write, u.read),
			`content_block_start`, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta`, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}`,
			`content_block_stop`, `{"type":"content_block_stop","index":0}`,
			`message_delta`, fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, u.output),
			`message_stop`, `{"type":"message_stop"}`,
		} {
			if strings.HasPrefix(ev, "{") {
				io.WriteString(w, "data: "+ev+"\n\n")
			} else {
				io.WriteString(w, "event: "+ev+"\n")
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// openaiFixture is OpenAI's Chat Completions stream with its usage chunk
// (prompt_tokens_details.cached_tokens, part of prompt_tokens).
func openaiFixture(t *testing.T, l *ledger) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !bytes.Contains(b, []byte(`"include_usage":true`)) {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		u := l.next(false)
		w.Header().Set("Content-Type", "text/event-stream")
		const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-2025-04-14",`
		for _, c := range []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
			head + `"choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":null}],"usage":null}`,
			head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
			head + fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
				u.prompt, u.output, u.prompt+u.output, u.read),
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+c+"\n\n")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// serviceAccount writes a service account key file whose token endpoint is tokenURL.
func serviceAccount(t *testing.T, tokenURL string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "sluice@proj.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURL})
	p := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// agentTurn is turn i of the session as Claude Code sends it on the Messages wire: the
// system prompt and the last tool marked, the history, and the last user turn marked.
func agentTurn(model string, i int) string {
	words := func(tokens int, s string) string { return strings.Repeat(s+" ", tokens) } // about a token a word
	tool := func(name string, mark bool) map[string]any {
		t := map[string]any{"name": name, "description": words(toolsTokens/3, name),
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}
		if mark {
			t["cache_control"] = map[string]any{"type": "ephemeral"}
		}
		return t
	}
	text := func(s string, mark bool) []map[string]any {
		b := map[string]any{"type": "text", "text": s}
		if mark {
			b["cache_control"] = map[string]any{"type": "ephemeral"}
		}
		return []map[string]any{b}
	}
	var msgs []map[string]any
	for k := 1; k <= i; k++ {
		msgs = append(msgs, map[string]any{"role": "user", "content": text(fmt.Sprintf("step %d: %s", k, words(userTokens, "go")), k == i)})
		if k < i {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": text("Done.", false)})
		}
	}
	b, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 1024, "stream": false,
		"system":   text(words(systemTokens, "rule"), true),
		"tools":    []map[string]any{tool("read", false), tool("edit", false), tool("bash", true)},
		"messages": msgs, "metadata": map[string]any{"user_id": "user_cache-cost_session_1"}})
	return string(b)
}

// TestAgentSessionCost is issue 46's "Done means": a 20-turn agent session through Sluice to
// Bedrock, Vertex (Claude) and OpenAI fixtures costs, in Sluice's usage account, what the
// same session costs directly, computed from the fixtures' own reports at the providers'
// published rates, within 2%; the client sees the cache reads in its own wire's shape.
func TestAgentSessionCost(t *testing.T) {
	var br, vx, oai ledger
	brs, vxs, oais := bedrockFixture(t, &br), vertexFixture(t, &vx), openaiFixture(t, &oai)
	g := serve(t, `
providers:
  br:  {kind: bedrock, region: us-east-1, base_url: "${BR_URL}", api_key: br-test-key}
  vx:  {kind: vertex, project: proj, location: us-east5, base_url: "${VX_URL}", credentials_file: "${VX_KEY}"}
  oai: {kind: openai, base_url: "${OAI_URL}/v1", api_key: sk-test}
models:
  bedrock: [br/`+bedrockClaude+`]
  vertex: [vx/`+vertexClaude+`]
  openai: [oai/gpt-4.1]
auth: {admin_token: `+adminToken+`}
`, map[string]string{"BR_URL": brs.URL, "VX_URL": vxs.URL, "VX_KEY": serviceAccount(t, vxs.URL+"/token"), "OAI_URL": oais.URL}, io.Discard)
	key := newKey(t, g.URL)

	targets := []struct {
		alias, target string
		l             *ledger
		// The published rates, USD per million tokens: input, cache read, 5-minute cache
		// write, output. Claude Sonnet 4.5 is priced the same on Anthropic, Bedrock and
		// Vertex; OpenAI's cached input is its read, and it reports no writes.
		input, read, write, output float64
	}{
		{"bedrock", "br/" + bedrockClaude, &br, 3.00, 0.30, 3.75, 15.00},
		{"vertex", "vx/" + vertexClaude, &vx, 3.00, 0.30, 3.75, 15.00},
		{"openai", "oai/gpt-4.1", &oai, 2.00, 0.50, 2.00, 8.00},
	}
	for _, tg := range targets {
		for i := 1; i <= sessionTurns; i++ {
			var ans struct {
				Usage struct {
					Input       int `json:"input_tokens"`
					CacheRead   int `json:"cache_read_input_tokens"`
					CacheCreate int `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			}
			post(t, g.URL+"/v1/messages", key, agentTurn(tg.alias, i), &ans)
			want := tg.l.turns[i-1]
			if ans.Usage.CacheRead != want.read || ans.Usage.CacheCreate != want.write || ans.Usage.Input != want.prompt-want.read-want.write {
				t.Errorf("%s turn %d: the client got usage %+v, want %d read, %d written, %d more input", tg.alias, i, ans.Usage, want.read, want.write, want.prompt-want.read-want.write)
			}
		}
	}
	charged := chargedByTarget(t, g.URL, int64(len(targets)*sessionTurns))
	for _, tg := range targets {
		direct := tg.l.cost(tg.input, tg.read, tg.write, tg.output)
		got := charged[tg.target]
		uncached := tg.l.cost(tg.input, tg.input, tg.input, tg.output) // every prompt token at the input price
		t.Logf("%-8s %2d turns: direct %.4f USD, Sluice %.4f USD (%+.2f%%); without the cache %.4f USD",
			tg.alias, len(tg.l.turns), direct, got, 100*(got-direct)/direct, uncached)
		if len(tg.l.turns) != sessionTurns || math.Abs(got-direct) > 0.02*direct {
			t.Errorf("%s: Sluice charged %.6f USD for %d turns, the session costs %.6f USD directly: want within 2%%", tg.alias, got, len(tg.l.turns), direct)
		}
	}
}

// newKey creates a virtual key through the admin API and returns its secret.
func newKey(t *testing.T, url string) string {
	t.Helper()
	var k struct{ Key string }
	req, _ := http.NewRequest("POST", url+"/admin/keys", strings.NewReader(`{"name":"cache-cost"}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&k); err != nil || res.StatusCode != http.StatusCreated || k.Key == "" {
		t.Fatalf("POST /admin/keys: status %d, err %v", res.StatusCode, err)
	}
	return k.Key
}

// post sends body to url with key and decodes the 200 answer into v.
func post(t *testing.T, url, key, body string, v any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", key)
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("POST %s: got %d %s", url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, b)
	}
}

// chargedByTarget is the cost in USD the usage account holds per target, once it counts
// requests requests (the account is written as each request ends).
func chargedByTarget(t *testing.T, url string, requests int64) map[string]float64 {
	t.Helper()
	now := time.Now().UTC()
	q := "group_by=target&from=" + now.AddDate(0, 0, -1).Format("2006-01-02") + "&to=" + now.AddDate(0, 0, 1).Format("2006-01-02")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", url+"/admin/usage?"+q, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ans struct {
			Data []struct {
				Target   string  `json:"target"`
				CostUSD  float64 `json:"cost_usd"`
				Requests int64   `json:"requests"`
			} `json:"data"`
			Total struct {
				Requests int64 `json:"requests"`
			} `json:"total"`
		}
		err = json.NewDecoder(res.Body).Decode(&ans)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ans.Total.Requests >= requests || time.Now().After(deadline) {
			out := map[string]float64{}
			for _, l := range ans.Data {
				out[l.Target] += l.CostUSD
			}
			return out
		}
	}
}

// TestSimPromptCache: through the gateway, the sim provider's simulated prompt cache reads a
// conversation's prefix on its second turn and reports it on the client's wire, and the
// account counts it (what make run shows of affinity paying off).
func TestSimPromptCache(t *testing.T) {
	g := serve(t, `
providers:
  sim: {kind: sim, api: anthropic}
models:
  agent: [sim/echo]
auth: {admin_token: `+adminToken+`}
`, nil, io.Discard)
	key := newKey(t, g.URL)
	var reads [2]int
	for i := range reads {
		var ans struct {
			Usage struct {
				CacheRead int `json:"cache_read_input_tokens"`
			} `json:"usage"`
		}
		post(t, g.URL+"/v1/messages", key, agentTurn("agent", i+1), &ans)
		reads[i] = ans.Usage.CacheRead
	}
	if reads[0] != 0 || reads[1] < systemTokens {
		t.Errorf("cache reads %v, want none on the first turn and at least the system prompt's %d tokens on the second", reads, systemTokens)
	}
}
