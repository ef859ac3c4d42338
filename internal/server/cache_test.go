package server_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// cacheConfig has aliases that cache and one that does not, on the same upstream scripts,
// so a live answer and a cached one can be compared byte for byte.
const cacheConfig = `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
guardrails:
  terms-out: {stage: output, kind: terms, terms: [condor]}
models:
  cached: {targets: ["mock/text?len=300&chunk=7"], cache: {ttl: 10m}}
  live:   {targets: ["mock/text?len=300&chunk=7"]}
  tools:  {targets: ["mock/tools?calls=2"], cache: {}}
  tools-live: {targets: ["mock/tools?calls=2"]}
  bypass: {targets: ["mock/echo"], cache: {client_bypass: true}}
  random: {targets: ["mock/echo"], cache: {}}
  random-ok: {targets: ["mock/echo"], cache: {nondeterministic: true}}
  failing: {targets: ["mock/text?fail=error"], cache: {}}
  cut:     {targets: ["mock/text?fail=cut&after=3"], cache: {}}
  refusing: {targets: ["mock/refuse"], cache: {}}
  long:    {targets: ["mock/text?len=300&max=10"], cache: {}}
  big:     {targets: ["mock/text?len=5000"], cache: {max_entry_bytes: 2KiB}}
  guarded: {targets: ["mock/echo"], cache: {}, guardrails: [terms-out]}
  held:    {targets: ["mock/text?len=200&chunk=5"], cache: {}, guardrails: [terms-out]}
  held-live: {targets: ["mock/text?len=200&chunk=5"], guardrails: [terms-out]}
`

// volatile are the parts of an answer that differ between two requests by design: the
// creation time.
var volatile = regexp.MustCompile(`"created(_at)?":\d+`)

// callIDs are the mock's tool call ids, numbered by its call count.
var callIDs = regexp.MustCompile(`call_mock_\d+_`)

type cacheReply struct {
	status int
	header http.Header
	body   string
}

func cachePost(t *testing.T, url, path, body string, h ...string) cacheReply {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "test")
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range resp.Trailer { // keepalives sent the headers while it waited: X-Sluice-Cache follows
		if resp.Header.Get(k) == "" {
			resp.Header[k] = v
		}
	}
	return cacheReply{resp.StatusCode, resp.Header, volatile.ReplaceAllString(string(b), `"created$1":0`)}
}

// A second identical request is answered from the cache, on every wire and delivery, with
// the bytes a live answer has: the stream in the original pieces, tool calls whole, the
// usage chunk; the upstream is called once.
func TestCacheHitIsTheLiveAnswer(t *testing.T) {
	for _, tt := range []struct{ name, path, alias, live, extra string }{
		{"chat stream", "/v1/chat/completions", "cached", "live", `,"stream":true,"stream_options":{"include_usage":true}`},
		{"chat plain", "/v1/chat/completions", "cached", "live", ``},
		{"chat tools stream", "/v1/chat/completions", "tools", "tools-live", `,"stream":true`},
		{"chat tools plain", "/v1/chat/completions", "tools", "tools-live", ``},
		{"chat held by a guardrail", "/v1/chat/completions", "held", "held-live", `,"stream":true`},
		{"responses stream", "/v1/responses", "cached", "live", `,"stream":true`},
		{"responses plain", "/v1/responses", "cached", "live", ``},
		{"messages stream", "/v1/messages", "cached", "live", `,"stream":true`},
		{"messages plain", "/v1/messages", "cached", "live", ``},
		{"messages tools stream", "/v1/messages", "tools", "tools-live", `,"stream":true`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t, cacheConfig)
			body := func(alias string) string {
				if tt.path == "/v1/responses" {
					return `{"model":"` + alias + `","input":"Hello there."` + tt.extra + `}`
				}
				if tt.path == "/v1/messages" {
					return `{"model":"` + alias + `","max_tokens":500,"messages":[{"role":"user","content":"Hello there."}]` + tt.extra + `}`
				}
				return `{"model":"` + alias + `","messages":[{"role":"user","content":"Hello there."}]` + tt.extra + `}`
			}
			live := cachePost(t, g.url, tt.path, body(tt.live))
			miss := cachePost(t, g.url, tt.path, body(tt.alias))
			hit := cachePost(t, g.url, tt.path, body(tt.alias))
			if got := miss.header.Get("X-Sluice-Cache"); got != "miss" {
				t.Errorf("first: got X-Sluice-Cache %q, want miss", got)
			}
			if got := hit.header.Get("X-Sluice-Cache"); got != "hit" || hit.header.Get("Age") == "" {
				t.Errorf("second: got X-Sluice-Cache %q Age %q, want hit and an Age", got, hit.header.Get("Age"))
			}
			if live.header.Get("X-Sluice-Cache") != "" {
				t.Errorf("an alias without cache: got X-Sluice-Cache %q, want none", live.header.Get("X-Sluice-Cache"))
			}
			if hit.status != 200 || hit.body != miss.body {
				t.Errorf("got hit %d:\n%s\nwant the answer of the miss:\n%s", hit.status, hit.body, miss.body)
			}
			// The mock numbers its tool calls per call: the rest is the live answer's.
			if got, want := callIDs.ReplaceAllString(hit.body, "call_"), callIDs.ReplaceAllString(live.body, "call_"); got != want {
				t.Errorf("got hit:\n%s\nwant the live answer:\n%s", got, want)
			}
			if got := hit.header.Get("Content-Type"); got != live.header.Get("Content-Type") {
				t.Errorf("got Content-Type %q, want %q", got, live.header.Get("Content-Type"))
			}
			model := strings.TrimPrefix(g.cfgTarget(tt.alias), "mock/")
			if n := g.mock.Calls(model); n != 2 { // the live alias's call and the miss
				t.Errorf("got %d upstream calls, want 2 (live and miss; the hit calls none)", n)
			}
		})
	}
}

// cfgTarget is the one target of the cache test aliases.
func (g *gateway) cfgTarget(alias string) string {
	re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(alias) + `: +\{targets: \["([^"]+)"\]`)
	return re.FindStringSubmatch(cacheConfig)[1]
}

// A request that differs in what changes the answer is a miss; one that differs only in
// how it is delivered or who asks is a hit.
func TestCacheKey(t *testing.T) {
	g := newGateway(t, cacheConfig)
	chat := func(extra string) cacheReply {
		return cachePost(t, g.url, "/v1/chat/completions",
			`{"model":"random","messages":[{"role":"user","content":"Key test."}]`+extra+`}`)
	}
	for _, tt := range []struct{ name, extra, want string }{
		{"first", ``, "miss"},
		{"same", ``, "hit"},
		{"streamed, user and stream_options", `,"stream":true,"user":"u1","stream_options":{"include_usage":true}`, "hit"},
		{"max_tokens", `,"max_tokens":50`, "miss"},
		{"other field", `,"presence_penalty":0.5`, "miss"},
		{"temperature 0", `,"temperature":0`, "miss"},
		{"temperature 0 again", `,"temperature":0`, "hit"},
		{"nondeterministic", `,"temperature":0.7`, "bypass"},
		{"nondeterministic again", `,"temperature":0.7`, "bypass"},
		{"seeded", `,"temperature":0.7,"seed":4`, "miss"},
		{"seeded again", `,"temperature":0.7,"seed":4`, "hit"},
	} {
		if got := chat(tt.extra).header.Get("X-Sluice-Cache"); got != tt.want {
			t.Errorf("%s: got X-Sluice-Cache %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := g.mock.Calls("echo"); n != 7 {
		t.Errorf("got %d upstream calls, want 7 (every miss and bypass)", n)
	}
	// The alias that caches nondeterministic requests does.
	for _, want := range []string{"miss", "hit"} {
		r := cachePost(t, g.url, "/v1/chat/completions", `{"model":"random-ok","messages":[{"role":"user","content":"Key test."}],"temperature":0.7}`)
		if got := r.header.Get("X-Sluice-Cache"); got != want {
			t.Errorf("nondeterministic: true: got %q, want %q", got, want)
		}
	}
}

// Errors, cut streams, refusals (the model's and a guardrail's), answers cut at max_tokens
// and answers over max_entry_bytes are never stored: the second request calls the upstream
// again.
func TestCacheStoresOnlyCompleteAnswers(t *testing.T) {
	g := newGateway(t, cacheConfig)
	for _, tt := range []struct{ alias, content string }{
		{"failing", "x"}, {"cut", "x"}, {"refusing", "x"}, {"long", "x"}, {"big", "x"},
		{"guarded", "say condor"},
	} {
		for _, stream := range []bool{false, true} {
			body := `{"model":"` + tt.alias + `","messages":[{"role":"user","content":"` + tt.content + `"}]`
			if stream {
				body += `,"stream":true`
			}
			body += `}`
			for i := range 2 {
				if got := cachePost(t, g.url, "/v1/chat/completions", body).header.Get("X-Sluice-Cache"); got != "miss" {
					t.Errorf("%s stream=%v request %d: got X-Sluice-Cache %q, want miss", tt.alias, stream, i+1, got)
				}
			}
		}
	}
}

// Cache-Control: no-cache skips the read and stores afresh; no-store skips both; neither
// is honoured where the alias does not allow it.
func TestCacheClientBypass(t *testing.T) {
	g := newGateway(t, cacheConfig)
	chat := func(alias string, h ...string) string {
		return cachePost(t, g.url, "/v1/chat/completions",
			`{"model":"`+alias+`","messages":[{"role":"user","content":"Bypass."}]}`, h...).header.Get("X-Sluice-Cache")
	}
	for i, tt := range []struct{ alias, cc, want string }{
		{"bypass", "no-store", "bypass"},
		{"bypass", "", "miss"}, // no-store kept it out
		{"bypass", "", "hit"},
		{"bypass", "no-cache", "bypass"},
		{"bypass", "", "hit"},
		{"random", "", "miss"},
		{"random", "no-cache", "hit"}, // the alias does not allow it
	} {
		var h []string
		if tt.cc != "" {
			h = []string{"Cache-Control", tt.cc}
		}
		if got := chat(tt.alias, h...); got != tt.want {
			t.Errorf("step %d (%s, %q): got X-Sluice-Cache %q, want %q", i, tt.alias, tt.cc, got, tt.want)
		}
	}
	if n := g.mock.Calls("echo"); n != 4 {
		t.Errorf("got %d upstream calls, want 4", n)
	}
}
