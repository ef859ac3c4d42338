package server_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// usageLine is a line of GET /admin/usage.
type usageLine struct {
	Key, Alias, Target, Day string
	Requests                int64   `json:"requests"`
	InputTokens             int64   `json:"input_tokens"`
	OutputTokens            int64   `json:"output_tokens"`
	CachedTokens            int64   `json:"cache_read_tokens"`
	CostUSD                 float64 `json:"cost_usd"`
	Errors                  int64   `json:"errors"`
	Fallbacks               int64   `json:"fallbacks"`
	Estimated               int64   `json:"estimated"`
}

// usageReport asks url's admin API for the account of today (and the days around it, so a
// test across midnight UTC still finds its rows), with extra query members.
func usageReport(t *testing.T, url, query string) (lines []usageLine, total usageLine) {
	t.Helper()
	now := time.Now().UTC()
	q := "from=" + now.AddDate(0, 0, -1).Format("2006-01-02") + "&to=" + now.AddDate(0, 0, 1).Format("2006-01-02") + "&" + query
	r := do(t, "GET", url+"/admin/usage?"+q, admin, "")
	if r.status != 200 {
		t.Fatalf("GET /admin/usage?%s: got %d %s, want 200", q, r.status, r.body)
	}
	var ans struct {
		Object string      `json:"object"`
		Data   []usageLine `json:"data"`
		Total  usageLine   `json:"total"`
	}
	if err := json.Unmarshal(r.body, &ans); err != nil || ans.Object != "usage" {
		t.Fatalf("GET /admin/usage: got %s, want a usage report", r.body)
	}
	return ans.Data, ans.Total
}

// fixtureUsage reads the usage a recorded stream reports, the simple way: prompt tokens
// (as the gateway counts them: Anthropic's cache reads and writes included), answer tokens,
// cached prompt tokens.
func fixtureUsage(t *testing.T, path string) (in, out, cached int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type anthUsage struct {
		Input       *int64 `json:"input_tokens"`
		Output      *int64 `json:"output_tokens"`
		CacheRead   *int64 `json:"cache_read_input_tokens"`
		CacheCreate *int64 `json:"cache_creation_input_tokens"`
	}
	var a anthUsage
	merge := func(u *anthUsage) {
		for _, f := range []struct{ dst, src **int64 }{{&a.Input, &u.Input}, {&a.Output, &u.Output},
			{&a.CacheRead, &u.CacheRead}, {&a.CacheCreate, &u.CacheCreate}} {
			if *f.src != nil {
				*f.dst = *f.src // message_delta repeats usage cumulatively: the last value wins
			}
		}
	}
	n := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	anthropic := strings.HasPrefix(filepath.Base(path), "anthropic-")
	for _, line := range strings.Split(string(b), "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var ev struct {
			Type  string `json:"type"`
			Usage *struct {
				anthUsage
				Prompt     int64 `json:"prompt_tokens"`
				Completion int64 `json:"completion_tokens"`
				Details    struct {
					Cached int64 `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
			Response *struct {
				Usage *struct {
					Input   int64 `json:"input_tokens"`
					Output  int64 `json:"output_tokens"`
					Details struct {
						Cached int64 `json:"cached_tokens"`
					} `json:"input_tokens_details"`
				} `json:"usage"`
			} `json:"response"`
			Message *struct {
				Usage *anthUsage `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(d), &ev) != nil {
			continue
		}
		switch {
		case anthropic && ev.Message != nil && ev.Message.Usage != nil:
			merge(ev.Message.Usage)
		case anthropic && ev.Type == "message_delta" && ev.Usage != nil:
			merge(&ev.Usage.anthUsage)
		case (ev.Type == "response.completed" || ev.Type == "response.incomplete") && ev.Response.Usage != nil:
			u := ev.Response.Usage
			in, out, cached = u.Input, u.Output, u.Details.Cached
		case !anthropic && ev.Type == "" && ev.Usage != nil:
			in, out, cached = ev.Usage.Prompt, ev.Usage.Completion, ev.Usage.Details.Cached
		}
	}
	if anthropic {
		return n(a.Input) + n(a.CacheRead) + n(a.CacheCreate), n(a.Output), n(a.CacheRead)
	}
	return in, out, cached
}

// Every recorded fixture's reported usage ends up in /admin/usage exactly, and its cost is
// the price table's: over two replicas sharing a real Redis, streamed and not.
func TestUsageOfEveryFixture(t *testing.T) {
	srv := redistest.Start(t)
	const openaiDir = "../provider/openai/testdata"
	oai := httptest.NewServer(mockllm.New(mockllm.Options{FixturesDir: openaiDir}))
	t.Cleanup(oai.Close)
	anth := httptest.NewServer(mockllm.New(mockllm.Options{FixturesDir: anthropicFixtures}))
	t.Cleanup(anth.Close)

	type fixture struct{ target, path string }
	var fixtures []fixture
	for _, dir := range []string{openaiDir, anthropicFixtures} {
		files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := filepath.Base(f)
			if strings.Contains(name, "error") {
				continue // a failed stream: no answer, no reported usage
			}
			prov := "chat"
			switch {
			case strings.HasPrefix(name, "openai-responses-"):
				prov = "resp"
			case strings.HasPrefix(name, "anthropic-"):
				prov = "anth"
			}
			fixtures = append(fixtures, fixture{prov + "/replay?file=" + name, f})
		}
	}
	if len(fixtures) < 15 {
		t.Fatalf("got %d fixtures, want every recording", len(fixtures))
	}
	// Each target its own price, so a cost summed from the wrong rows shows.
	prices := "prices:\n"
	for i, f := range fixtures {
		prices += fmt.Sprintf("  %q: {input: %d, output: %d, cached_input: 0.5}\n", f.target, i+1, 10*(i+1))
	}
	yaml := `
providers:
  chat: {kind: openai-compatible, base_url: "${OAI}/v1"}
  resp: {kind: openai, api: responses, base_url: "${OAI}/v1", api_key: test}
  anth: {kind: anthropic, base_url: "${ANTH}", api_key: test}
models:
  default: [chat/echo]
auth: {admin_token: ` + admin + `}
redis: {url: "${REDIS_URL}", timeout: 5s, on_failure: closed}
` + prices
	vars := map[string]string{"OAI": oai.URL, "ANTH": anth.URL, "REDIS_URL": srv.URL}
	gw := [2]string{serveGate(t, yaml, vars, time.Hour, nil), serveGate(t, yaml, vars, time.Hour, nil)}
	id, secret := createKey(t, gw[0], admin, `{"name":"fixtures"}`)
	for i, f := range fixtures {
		r := do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody(f.target, i%3 != 0, `,"stream_options":{"include_usage":true}`))
		if r.status != 200 || strings.Contains(string(r.body), `"error"`) {
			t.Fatalf("%s: got %d %s, want a whole answer", f.target, r.status, r.body)
		}
	}
	lines, total := usageReport(t, gw[1], "group_by=target&key="+id)
	got := map[string]usageLine{}
	for _, l := range lines {
		got[l.Target] = l
	}
	var sum usageLine
	for i, f := range fixtures {
		in, out, cached := fixtureUsage(t, f.path)
		l := got[f.target]
		if l.Requests != 1 || l.InputTokens != in || l.OutputTokens != out || l.CachedTokens != cached || l.Estimated != 0 || l.Errors != 0 {
			t.Errorf("%s: got %+v, want 1 request, %d in (%d cached), %d out, reported", f.target, l, in, cached, out)
		}
		price := float64(i + 1)
		nano := int64(float64(in-cached)*price*1000 + float64(cached)*500 + float64(out)*price*10*1000)
		if want := float64(nano) / 1e9; l.CostUSD != want {
			t.Errorf("%s: got cost %v USD, want %v (the table's)", f.target, l.CostUSD, want)
		}
		sum.Requests++
		sum.InputTokens, sum.OutputTokens = sum.InputTokens+in, sum.OutputTokens+out
	}
	if len(lines) != len(fixtures) || total.Requests != sum.Requests || total.InputTokens != sum.InputTokens || total.OutputTokens != sum.OutputTokens {
		t.Errorf("got %d lines, total %+v; want %d lines adding up to %+v", len(lines), total, len(fixtures), sum)
	}
}

// A stream cut before its usage, and one that ended without it, are marked estimated (and
// counted); the prompt is estimated too. A non-streamed answer carries its cost.
func TestUsageEstimated(t *testing.T) {
	url, _ := meteredGateway(t, "prices: {mock/text: {input: 1, output: 2}}\n")
	_, secret := createKey(t, url, admin, `{"name":"est"}`)
	cut := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("mock/text?len=40&fail=cut&after=3", true, ""))
	if !strings.Contains(string(cut.body), `"code":"upstream_truncated"`) {
		t.Fatalf("got %s, want a stream cut in-band", cut.body)
	}
	clean := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("mock/text?len=40&usage=never", true, `,"stream_options":{"include_usage":true}`))
	if !strings.HasSuffix(string(clean.body), "data: [DONE]\n\n") || clean.header.Get("X-Sluice-Cost-Usd") != "" {
		t.Fatalf("got %s with cost %q, want a whole stream without a cost header", clean.body, clean.header.Get("X-Sluice-Cost-Usd"))
	}
	once := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("mock/text", false, ""))
	var c struct {
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(once.body, &c)
	wantCost := strconv.FormatFloat(float64(c.Usage.PromptTokens*1000+c.Usage.CompletionTokens*2000)/1e9, 'f', -1, 64)
	if got := once.header.Get("X-Sluice-Cost-Usd"); once.status != 200 || got != wantCost {
		t.Errorf("non-streamed: got %d with X-Sluice-Cost-Usd %q, want 200 and %s", once.status, got, wantCost)
	}
	lines, _ := usageReport(t, url, "group_by=target")
	got := map[string]usageLine{}
	for _, l := range lines {
		got[l.Target] = l
	}
	for _, tt := range []struct {
		target      string
		errors, est int64
	}{
		{"mock/text?len=40&fail=cut&after=3", 1, 1},
		{"mock/text?len=40&usage=never", 0, 1},
		{"mock/text", 0, 0},
	} {
		l := got[tt.target]
		if l.Requests != 1 || l.Errors != tt.errors || l.Estimated != tt.est || l.InputTokens == 0 || l.OutputTokens == 0 {
			t.Errorf("%s: got %+v, want 1 request, %d errors, %d estimated, tokens counted", tt.target, l, tt.errors, tt.est)
		}
	}
	if l := got["mock/text"]; l.InputTokens != c.Usage.PromptTokens || l.OutputTokens != c.Usage.CompletionTokens {
		t.Errorf("reported: got %+v, want the answer's usage %+v", l, c.Usage)
	}
}

// meteredGateway is a gateway in front of a mock upstream (alias default: mock/echo), with
// the admin API on, keys made through it, and extra configuration.
func meteredGateway(t *testing.T, extra string) (string, *mockllm.Server) {
	t.Helper()
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	yaml := baseConfig + "auth: {admin_token: " + admin + "}\n" + extra
	return serveGate(t, yaml, map[string]string{"MOCK_URL": ms.URL}, time.Hour, nil), mock
}

func TestUsageReportQuery(t *testing.T) {
	url, _ := meteredGateway(t, "")
	id, secret := createKey(t, url, admin, `{"name":"q"}`)
	_, other := createKey(t, url, admin, `{"name":"other"}`)
	for _, key := range []string{secret, secret, other} {
		if r := do(t, "POST", url+"/v1/chat/completions", key, chatBody("default", false, "")); r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.body)
		}
	}
	if lines, total := usageReport(t, url, ""); len(lines) != 2 || lines[0].Key == "" || total.Requests != 3 {
		t.Errorf("by key: got %+v total %+v, want 2 keys, 3 requests", lines, total)
	}
	if lines, _ := usageReport(t, url, "key="+id+"&group_by=alias"); len(lines) != 1 || lines[0].Alias != "default" || lines[0].Requests != 2 {
		t.Errorf("one key by alias: got %+v, want default with 2 requests", lines)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if lines, _ := usageReport(t, url, "group_by=day"); len(lines) != 1 || lines[0].Day != today {
		t.Errorf("by day: got %+v, want today only", lines)
	}
	for _, q := range []string{"group_by=model", "from=yesterday", "to=2026-13-01", "from=2026-06-02&to=2026-06-01", "from=2024-01-01&to=2026-01-01"} {
		if r := do(t, "GET", url+"/admin/usage?"+q, admin, ""); r.status != 400 {
			t.Errorf("?%s: got %d %s, want 400", q, r.status, r.body)
		}
	}
	if r := do(t, "GET", url+"/admin/usage", "", ""); r.status != 401 {
		t.Errorf("without the admin token: got %d, want 401", r.status)
	}
}
