package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// logRecord is what the tests read of a request log record.
type logRecord struct {
	ID       string            `json:"id"`
	Wire     string            `json:"wire"`
	KeyID    string            `json:"key_id"`
	KeyName  string            `json:"key_name"`
	KeyMeta  map[string]string `json:"key_meta"`
	Team     string            `json:"team"`
	Path     string            `json:"path"`
	Alias    string            `json:"alias"`
	Target   string            `json:"target"`
	Status   int               `json:"status"`
	Kind     string            `json:"kind"`
	Stream   bool              `json:"stream"`
	Error    string            `json:"error"`
	TokensIn int               `json:"tokens_in"`
	Capture  string            `json:"capture"`
	Cache    string            `json:"cache"`
	// Redactions, Guardrails and Tools are the masks, verdicts and tool calls.
	Redactions int            `json:"redactions"`
	Guardrails []logGuardrail `json:"guardrails"`
	Tools      []struct {
		Name, Server, Outcome string
	} `json:"tools"`
	Attempts []struct {
		Target, Kind string
		Status       int
	} `json:"attempts"`
	Turns []struct {
		AtMS      float64 `json:"at_ms"`
		TokensIn  int     `json:"tokens_in"`
		TokensOut int     `json:"tokens_out"`
	} `json:"turns"`
	Content *struct {
		Request, Answer string
		Cap             int
		Truncated       bool
	} `json:"content"`
}

// logGuardrail is a record's guardrail verdict.
type logGuardrail struct{ Name, Stage, Verdict string }

const logsAdmin = "admin-token-for-logs"

// logsConfig is a gateway that keeps its request log in a SQLite file of dir, capturing
// content, with an alias that falls back.
func logsConfig(dir string) string {
	return logsConfigURL("sqlite://" + filepath.Join(dir, "logs.db"))
}

// sqliteLogs is the auth: and logs: lines of a gateway with the admin token logsAdmin and
// its request log in a SQLite file of a temporary folder; extra adds to logs: (", capture:
// content").
func sqliteLogs(t *testing.T, extra string) string {
	return "auth: {admin_token: " + logsAdmin + "}\nlogs: {url: \"sqlite://" + filepath.Join(t.TempDir(), "logs.db") + "\"" + extra + "}\n"
}

// logsConfigURL is logsConfig with the log's store at url.
func logsConfigURL(url string) string { return logsYAML(url, "", "") }

// logsYAML is logsConfigURL with more providers and aliases (lines of YAML, indented).
func logsYAML(url, providers, models string) string {
	// A live tail writes only when a record comes: its keepalives are what tell it that its
	// client left (package presence), so they come often here.
	return `
heartbeat_interval: 200ms
auth: {admin_token: ` + logsAdmin + `}
logs: {url: "` + url + `", capture: content}
providers:
  sim: {kind: sim}
` + providers + `models:
  default: [sim/echo]
  flaky: ["sim/text?fail=500", sim/echo]
` + models
}

// tailLogs opens GET /admin/logs/tail?query, closed when the test ends; next returns the
// next record and its data line as sent.
func tailLogs(t *testing.T, url, query string) (next func() (logRecord, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/admin/logs/tail?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+logsAdmin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tail: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	time.Sleep(100 * time.Millisecond) // the tail starts now: the requests come after it
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return func() (logRecord, string) {
		t.Helper()
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var rec logRecord
				if err := json.Unmarshal([]byte(data), &rec); err != nil {
					t.Fatal(err)
				}
				return rec, data
			}
		}
		t.Fatalf("the tail ended (%v) before the record came", sc.Err())
		return logRecord{}, ""
	}
}

// waitLogs polls GET /admin/logs?query until it holds n records (the writer flushes every
// half second), and returns them.
func waitLogs(t *testing.T, url, query string, n int) []logRecord {
	t.Helper()
	var page struct {
		Data []logRecord `json:"data"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := do(t, "GET", url+"/admin/logs?"+query, logsAdmin, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET /admin/logs?%s: %d %s", query, r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Data) >= n || time.Now().After(deadline) {
			break
		}
	}
	if len(page.Data) != n {
		t.Fatalf("got %d records for %q, want %d", len(page.Data), query, n)
	}
	return page.Data
}

// waitRecord polls GET /admin/logs/{id} until the record is there, and returns it.
func waitRecord(t *testing.T, url, id string) logRecord {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := do(t, "GET", url+"/admin/logs/"+id, logsAdmin, "")
		if r.status == http.StatusOK {
			var rec logRecord
			if err := json.Unmarshal(r.body, &rec); err != nil || rec.ID != id {
				t.Fatalf("GET /admin/logs/%s: %v, got %s", id, err, r.body)
			}
			return rec
		}
		if r.status != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("GET /admin/logs/%s: got %d %s, want the record", id, r.status, r.body)
		}
	}
}

// Every request of the route table gets one record, with who asked, what served, the
// fallback's attempts and the content as the client saw it, masked; a planted secret and the
// virtual key reach neither the API nor the store's bytes: the SQLite file, or pg_dump of a
// real PostgreSQL.
func TestRequestLog(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testRequestLog(t, "sqlite://"+filepath.Join(dir, "logs.db"), func() [][]byte {
			files, _ := filepath.Glob(filepath.Join(dir, "logs.db*"))
			var bs [][]byte
			for _, fn := range files {
				b, err := os.ReadFile(fn)
				if err != nil {
					t.Fatal(err)
				}
				bs = append(bs, b)
			}
			return bs
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testRequestLog(t, pg.URL, func() [][]byte { return [][]byte{pg.Dump(t, "sluice")} })
	})
}

// testRequestLog runs TestRequestLog on the store at logsURL; stored returns its bytes.
func testRequestLog(t *testing.T, logsURL string, stored func() [][]byte) {
	// The provider's key is planted too: the upstream quotes it back in its errors, whole.
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(ms.Close)
	const providerKey = "sk-proj-Pk4Wd8Lq2Zr7Vn5Tm9Xb3Hc6Jf1Gs0Ya"
	url := serveGate(t, logsYAML(logsURL, `  oai: {kind: openai, base_url: "${MOCK_URL}/v1", api_key: "${OAI_KEY}"}
`, `  quoting: ["oai/text?fail=400&quote=all"]
  exhausted: ["oai/text?fail=500&quote=all", "oai/text?fail=429&quote=masked"]
  midstream: ["oai/text?len=40&chunk=8&fail=error&after=3&quote=all"]
`), map[string]string{"MOCK_URL": ms.URL, "OAI_KEY": providerKey}, time.Minute, nil)
	id, secret := createKey(t, url, logsAdmin, `{"name":"team-b-bot","metadata":{"team":"b"}}`)
	const planted = "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	tail := tailLogs(t, url, "key="+id)

	plain := do(t, "POST", url+"/v1/chat/completions", secret,
		`{"model":"default","messages":[{"role":"user","content":"my key is `+planted+` keep it"}]}`)
	fell := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("flaky", true, ""))
	missing := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("nope", false, ""))
	quoted := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("quoting", false, ""))
	exhausted := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("exhausted", true, ""))
	midstream := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("midstream", true, ""))
	if plain.status != 200 || fell.status != 200 || missing.status != 404 || quoted.status != 400 || exhausted.status < 400 || midstream.status != 200 {
		t.Fatalf("got %d, %d, %d, %d, %d; want 200, 200, 404, 400, an error", plain.status, fell.status, missing.status,
			quoted.status, exhausted.status)
	}
	if !strings.Contains(string(quoted.body), "[REDACTED:") {
		t.Fatalf("the upstream's error %s, want its quote of the request there, masked", quoted.body)
	}
	recs := waitLogs(t, url, "key="+id, 6)
	byID := map[string]logRecord{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	p := byID[plain.header.Get("X-Request-Id")]
	if p.Wire != "chat" || p.KeyName != "team-b-bot" || p.KeyMeta["team"] != "b" || p.Target != "sim/echo" ||
		p.Status != 200 || p.TokensIn == 0 || p.Capture != "content" || p.Content == nil {
		t.Fatalf("plain call's record %+v", p)
	}
	if strings.Contains(p.Content.Request, planted) || strings.Contains(p.Content.Answer, planted) ||
		!strings.Contains(p.Content.Request, "[REDACTED:") || !strings.Contains(p.Content.Answer, "keep it") {
		t.Errorf("captured content %+v, want it masked as the client saw it", p.Content)
	}
	f := byID[fell.header.Get("X-Request-Id")]
	if !f.Stream || len(f.Attempts) != 2 || f.Attempts[0].Target != "sim/text?fail=500" || f.Attempts[0].Kind == "" ||
		f.Attempts[1].Target != "sim/echo" || f.Attempts[1].Kind != "" || f.Target != "sim/echo" {
		t.Errorf("fallback's record %+v, want both attempts, the first failed", f)
	}
	m := byID[missing.header.Get("X-Request-Id")]
	if m.Status != 404 || m.Kind != "not_found" || !strings.Contains(m.Error, "does not exist") {
		t.Errorf("unknown model's record %+v, want the 404 and its public text", m)
	}

	// One record by its request id; filters; the export.
	r := do(t, "GET", url+"/admin/logs/"+f.ID, logsAdmin, "")
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"id":"`+f.ID+`"`)) {
		t.Errorf("GET /admin/logs/{id}: %d %s", r.status, r.body)
	}
	if got := waitLogs(t, url, "key="+id+"&status=404", 1); got[0].ID != m.ID {
		t.Errorf("status filter gave %+v", got)
	}
	r = do(t, "GET", url+"/admin/logs/export?format=jsonl&key="+id, logsAdmin, "")
	if r.status != 200 || bytes.Count(r.body, []byte("\n")) != 6 || !strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("export: %d %q, %d lines", r.status, r.header, bytes.Count(r.body, []byte("\n")))
	}
	q := byID[quoted.header.Get("X-Request-Id")]
	if q.Status != 400 || !strings.Contains(q.Error, "[REDACTED:") {
		t.Errorf("quoted error's record %+v, want the 400 and the upstream's text, masked", q)
	}
	if x := byID[exhausted.header.Get("X-Request-Id")]; x.Status < 400 || len(x.Attempts) != 2 || x.Error == "" {
		t.Errorf("exhausted chain's record %+v, want the error and both attempts", x)
	}
	if ms := byID[midstream.header.Get("X-Request-Id")]; !strings.Contains(ms.Error, "[REDACTED:") {
		t.Errorf("in-band error's record %+v, want the upstream's text, masked", ms)
	}

	// Secrets: the planted one, the provider's key and the virtual key are in no answer and
	// in no byte of the store.
	secrets := []string{planted, providerKey, secret, logsAdmin}
	leak := func(b []byte) string {
		for _, s := range secrets {
			if run := runOf(string(b), s); run != "" {
				return run
			}
		}
		return ""
	}
	answers := map[string][]byte{}
	for _, path := range []string{"/admin/logs?limit=1000", "/admin/logs/export?format=csv", "/admin/logs/export?format=jsonl"} {
		answers[path] = do(t, "GET", url+path, logsAdmin, "").body
	}
	for _, rec := range recs {
		answers["/admin/logs/"+rec.ID] = do(t, "GET", url+"/admin/logs/"+rec.ID, logsAdmin, "").body
	}
	var tailed []byte
	for range recs {
		_, data := tail()
		tailed = append(tailed, data...)
	}
	answers["/admin/logs/tail"] = tailed
	for path, b := range answers {
		if !bytes.Contains(b, []byte(q.ID)) && !bytes.Contains(b, []byte(`"id":"`)) {
			t.Errorf("%s holds no record: %s", path, b)
		}
		if run := leak(b); run != "" {
			t.Errorf("%s quotes a secret (%q)", path, run)
		}
	}
	if !bytes.Contains(tailed, []byte(q.ID)) || !bytes.Contains(tailed, []byte(p.ID)) {
		t.Errorf("the tail gave %s, want the plain call's and the quoted error's records", tailed)
	}
	bs := stored()
	if len(bs) == 0 || !bytes.Contains(bytes.Join(bs, nil), []byte(f.ID)) {
		t.Fatal("the store's bytes do not hold the records: the check below would prove nothing")
	}
	for _, b := range bs {
		if run := leak(b); run != "" {
			t.Errorf("the store's bytes hold a secret (%q)", run)
		}
	}
}

// The log's API refuses what it cannot answer with a 4xx that names the parameter, and
// answers only the admin token.
func TestRequestLogBadInput(t *testing.T) {
	url := serveGate(t, logsConfig(t.TempDir()), nil, time.Minute, nil)
	_, secret := createKey(t, url, logsAdmin, `{"name":"k"}`)
	for _, tt := range []struct {
		path, key string
		status    int
		param     string
	}{
		{"/admin/logs?limit=5000", logsAdmin, 400, "limit"},
		{"/admin/logs?nope=1", logsAdmin, 400, "nope"},
		{"/admin/logs?cursor=not-a-cursor", logsAdmin, 400, "cursor"},
		{"/admin/logs?from=2026-12-02T10:00:00Z&to=2026-12-01T10:00:00Z", logsAdmin, 400, "from"},
		{"/admin/logs?stream=maybe", logsAdmin, 400, "stream"},
		{"/admin/logs/export?format=xml", logsAdmin, 400, "format"},
		{"/admin/logs/tail?from=2026-12-01T10:00:00Z", logsAdmin, 400, "from"},
		{"/admin/logs/nope-such-id", logsAdmin, 404, "id"},
		{"/admin/usage?group_by=meta.bad%20name", logsAdmin, 400, "group_by"},
		{"/admin/logs", secret, 401, ""},
		{"/admin/logs", "", 401, ""},
	} {
		r := do(t, "GET", url+tt.path, tt.key, "")
		var e struct{ Error struct{ Param *string } }
		_ = json.Unmarshal(r.body, &e)
		if r.status != tt.status || (tt.param != "" && (e.Error.Param == nil || *e.Error.Param != tt.param)) {
			t.Errorf("%s: got %d %s, want %d naming %q", tt.path, r.status, r.body, tt.status, tt.param)
		}
	}
}

// The live tail shows a new request's record; usage reports by a key metadata field and by
// hour; health says the log answers.
func TestRequestLogTailUsageHealth(t *testing.T) {
	url := serveGate(t, logsConfig(t.TempDir()), nil, time.Minute, nil)
	id, secret := createKey(t, url, logsAdmin, `{"name":"k","metadata":{"team":"search"}}`)
	tail := tailLogs(t, url, "key="+id)
	call := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", false, ""))
	if got, _ := tail(); got.ID != call.header.Get("X-Request-Id") {
		t.Fatalf("tail gave %+v, want the call's record", got)
	}

	r := do(t, "GET", url+"/admin/usage?group_by=meta.team&key="+id, logsAdmin, "")
	var u struct {
		Source string
		Data   []struct {
			Group    string
			Requests int
		}
	}
	if err := json.Unmarshal(r.body, &u); err != nil || r.status != 200 || u.Source != "logs" || len(u.Data) != 1 ||
		u.Data[0].Group != "search" || u.Data[0].Requests != 1 {
		t.Errorf("usage by meta.team: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/usage?group_by=hour", logsAdmin, ""); r.status != 200 || !bytes.Contains(r.body, []byte(`"bucket":"hour"`)) {
		t.Errorf("usage by hour: %d %s", r.status, r.body)
	}
	r = do(t, "GET", url+"/admin/health", logsAdmin, "")
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"logs":"ok"`)) || !bytes.Contains(r.body, []byte(`"redis":"off"`)) ||
		!bytes.Contains(r.body, []byte(`"target":"sim/echo"`)) {
		t.Errorf("health: %d %s", r.status, r.body)
	}
}

// With auth off on loopback (make run's embedded default), the console signs in with no
// token and reads the request log; the admin API still answers nothing without a session,
// and has no key routes.
func TestRequestLogOpenConsole(t *testing.T) {
	url := serveGate(t, `
logs: {url: "sqlite://`+filepath.Join(t.TempDir(), "logs.db")+`"}
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
`, nil, time.Minute, nil)
	if r := do(t, "GET", url+"/console/session", "", ""); r.status != 200 || !bytes.Contains(r.body, []byte(`"open":true`)) {
		t.Fatalf("GET /console/session: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/logs", "", ""); r.status != 401 {
		t.Errorf("GET /admin/logs without a session: %d, want 401", r.status)
	}
	resp, err := http.Post(url+"/console/session", "application/json", strings.NewReader(`{"token":""}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != 200 || len(cookies) != 1 {
		t.Fatalf("sign-in: %d, cookies %v", resp.StatusCode, cookies)
	}
	call := do(t, "POST", url+"/v1/chat/completions", "", chatBody("default", false, ""))
	get := func(path string) (int, []byte) {
		req, _ := http.NewRequest("GET", url+path, nil)
		req.AddCookie(cookies[0])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, body := get("/admin/logs")
		if status == 200 && bytes.Contains(body, []byte(call.header.Get("X-Request-Id"))) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console session never saw the call: %d %s", status, body)
		}
	}
	if status, _ := get("/admin/keys"); status != 404 {
		t.Errorf("GET /admin/keys with auth off: %d, want 404 (no key routes)", status)
	}
}
