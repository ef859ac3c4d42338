package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/server"
)

// The plain endpoints of issue 48: moderations, images and rerank, each on its alias section,
// through the same chain, keys, budget and log as embeddings.

// plainKey is the provider key the failing upstream quotes back in its error.
const plainKey = "sk-proj-Pl4inK3yQm7ZrT2xWv9LpK4nB8cD1eF6"

// The real wires' answers.
const (
	moderationAnswer = `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":false,"categories":{"violence":false},"category_scores":{"violence":0.001}}]}`
	imagesAnswer     = `{"created":1767225600,"data":[{"url":"https://img.example/1.png"},{"url":"https://img.example/2.png"}]}`
	rerankAnswer     = `{"id":"rr-1","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`
)

// plainUpstream answers every path with status and, on 200, answer; on an error, a body that
// quotes the key it was sent. It records the calls.
type plainUpstream struct {
	status int
	answer string
	mu     sync.Mutex
	calls  []string // "path body"
	auth   string
}

func (u *plainUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.calls = append(u.calls, r.URL.Path+" "+string(b))
	u.auth = r.Header.Get("Authorization")
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(u.status)
	if u.status == http.StatusOK {
		io.WriteString(w, u.answer)
		return
	}
	io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`","type":"invalid_request_error"}}`)
}

func (u *plainUpstream) Calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...)
}

// plainRecord is what the tests read of a request's record.
type plainRecord struct {
	ID, Wire, Path, Alias, Target string
	Status                        int
	CostUSD                       float64 `json:"cost_usd"`
	Attempts                      []struct {
		Target string
		Status int
	}
}

// A failing first target (500, its body quoting the key) falls back to the second, which
// answers in its wire: the answer passes unchanged, the upstream got its path and the body with
// the target's model, and the record holds the target, both attempts and the cost priced from
// the table (per image, per search unit; moderations free). A 400 that quotes the key is
// passed on with the key masked.
func TestPlainEndpointsFallback(t *testing.T) {
	tests := []struct {
		route, section, body, answer, model, upPath string
		cost                                        float64
	}{
		{"/v1/moderations", "moderations", `{"input":["hello","world"],"model":"mod"}`, moderationAnswer,
			"omni-moderation-latest", "/v1/moderations", 0},
		{"/v1/images/generations", "images", `{"model":"img","prompt":"a lighthouse","n":2,"size":"1024x1024"}`, imagesAnswer,
			"dall-e-3", "/v1/images/generations", 0.08},
		{"/v1/rerank", "rerank", `{"model":"rr","query":"capital of France","documents":["Berlin","Paris"],"top_n":2}`, rerankAnswer,
			"rerank-v3.5", "/v1/rerank", 0.002},
	}
	for _, tt := range tests {
		t.Run(tt.section, func(t *testing.T) {
			a := &plainUpstream{status: http.StatusInternalServerError}
			b := &plainUpstream{status: http.StatusOK, answer: tt.answer}
			as, bs := httptest.NewServer(a), httptest.NewServer(b)
			t.Cleanup(as.Close)
			t.Cleanup(bs.Close)
			alias := map[string]string{"moderations": "mod", "images": "img", "rerank": "rr"}[tt.section]
			url := serveGate(t, logsYAML("sqlite://"+t.TempDir()+"/logs.db",
				`  a: {kind: openai-compatible, base_url: "${A_URL}/v1", api_key: "${KEY}"}
  b: {kind: openai-compatible, base_url: "${B_URL}/v1", api_key: "${KEY}"}
`, tt.section+":\n  "+alias+": [a/"+tt.model+", b/"+tt.model+"]\n"),
				map[string]string{"A_URL": as.URL, "B_URL": bs.URL, "KEY": plainKey}, time.Minute, nil)

			_, key := createKey(t, url, logsAdmin, `{"name":"plain"}`)
			r := do(t, "POST", url+tt.route, key, tt.body)
			if r.status != http.StatusOK || string(r.body) != tt.answer {
				t.Fatalf("got %d %s, want the second target's answer unchanged", r.status, r.body)
			}
			if got := r.header.Get("X-Sluice-Target"); got != "b/"+tt.model {
				t.Errorf("X-Sluice-Target %q", got)
			}
			calls := b.Calls()
			if len(a.Calls()) != 1 || len(calls) != 1 {
				t.Fatalf("calls a %d b %d, want 1 and 1", len(a.Calls()), len(calls))
			}
			path, sent, _ := strings.Cut(calls[0], " ")
			var m map[string]any
			if path != tt.upPath || json.Unmarshal([]byte(sent), &m) != nil || m["model"] != tt.model {
				t.Errorf("upstream got %s %s, want %s with model %s", path, sent, tt.upPath, tt.model)
			}
			rec := plainWaitRecord(t, url, r.header.Get("X-Request-Id"))
			if rec.Wire != tt.section || rec.Path != tt.route || rec.Alias != alias || rec.Target != "b/"+tt.model ||
				rec.Status != 200 || len(rec.Attempts) != 2 || math.Abs(rec.CostUSD-tt.cost) > 1e-12 {
				t.Errorf("record %+v, want wire %s, alias %s, two attempts, cost %g", rec, tt.section, alias, tt.cost)
			}

			// One target that refuses with a 400 quoting the key: passed on, the key masked.
			a.status = http.StatusBadRequest
			body := strings.Replace(tt.body, `"model":"`+alias+`"`, `"model":"a/`+tt.model+`"`, 1)
			r = do(t, "POST", url+tt.route, key, body)
			if r.status != http.StatusBadRequest || bytes.Contains(r.body, []byte(plainKey)) || bytes.Contains(r.body, []byte(plainKey[8:])) ||
				!strings.Contains(string(r.body), `"error"`) {
				t.Errorf("a 400 quoting the key: got %d %s, want a 400 with the key masked", r.status, r.body)
			}
		})
	}
}

func plainWaitRecord(t *testing.T, url, id string) plainRecord {
	t.Helper()
	waitRecord(t, url, id)
	var rec plainRecord
	if err := json.Unmarshal(do(t, "GET", url+"/admin/logs/"+id, logsAdmin, "").body, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// plainSim serves the embedded default's plain aliases over the simulation.
const plainSim = `
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
moderations:
  omni-moderation-latest: [sim/moderation]
images:
  dall-e-2: [sim/image]
rerank:
  rerank: [sim/rerank]
`

// The simulation answers each endpoint, in the shape api/openapi.yaml declares: a moderation
// flags the input that holds "kill" and only it, an image is a PNG (n of them), rerank scores
// by the query's words, the best first.
func TestPlainEndpointsSim(t *testing.T) {
	gs := serveConfig(t, plainSim, nil)
	t.Cleanup(gs.Close)
	sc := newSpecCheck(t, &gateway{url: gs.URL})

	x := sc.call(t, "POST", "/v1/moderations", "", `{"input":["I will kill the process","hello there"]}`, 200)
	var mod struct {
		Model   string
		Results []struct {
			Flagged    bool
			Categories map[string]bool
		}
	}
	if err := json.Unmarshal(x.body, &mod); err != nil || mod.Model != "moderation" || len(mod.Results) != 2 ||
		!mod.Results[0].Flagged || !mod.Results[0].Categories["violence"] || mod.Results[1].Flagged {
		t.Errorf("moderation: %v %s, want the first input flagged for violence, not the second", err, x.body)
	}

	x = sc.call(t, "POST", "/v1/images/generations", "", `{"prompt":"a lighthouse","n":2,"response_format":"b64_json"}`, 200)
	var img struct {
		Data []struct {
			B64JSON string `json:"b64_json"`
		}
	}
	if err := json.Unmarshal(x.body, &img); err != nil || len(img.Data) != 2 {
		t.Fatalf("images: %v %.200s, want two images", err, x.body)
	}
	raw, err := base64.StdEncoding.DecodeString(img.Data[0].B64JSON)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(raw)); err != nil || cfg.Width != 8 || cfg.Height != 8 {
		t.Errorf("image: %v %+v, want an 8x8 PNG", err, cfg)
	}

	body := `{"model":"rerank","query":"capital of France","documents":["Berlin is in Germany",{"text":"Paris is the capital of France"},"capital"],"top_n":2,"return_documents":true}`
	x = sc.call(t, "POST", "/v1/rerank", "", body, 200)
	var rr struct {
		Results []struct {
			Index    int
			Score    float64 `json:"relevance_score"`
			Document struct{ Text string }
		}
		Meta struct {
			Billed struct {
				SearchUnits int `json:"search_units"`
			} `json:"billed_units"`
		}
	}
	if err := json.Unmarshal(x.body, &rr); err != nil || len(rr.Results) != 2 || rr.Results[0].Index != 1 || rr.Results[0].Score != 1 ||
		rr.Results[1].Index != 2 || rr.Results[0].Document.Text != "Paris is the capital of France" || rr.Meta.Billed.SearchUnits != 1 {
		t.Errorf("rerank: %v %s, want document 1 (score 1) then 2", err, x.body)
	}
	if y := sc.call(t, "POST", "/v1/rerank", "", body, 200); string(y.body) != string(x.body) {
		t.Errorf("rerank is not deterministic: %s then %s", x.body, y.body)
	}
}

// Bad input on every plain route is a 4xx in OpenAI's error shape, never a 5xx, and never
// reaches an upstream.
func TestPlainEndpointsBadInput(t *testing.T) {
	yaml := strings.Replace(plainSim, "  sim: {kind: sim}\n", "  sim: {kind: sim}\n  oai: {kind: openai, api_key: k, base_url: \"http://127.0.0.1:9/v1\"}\n", 1)
	gs := serveConfig(t, yaml+"limits: {max_body_bytes: 4096}\n", nil)
	t.Cleanup(gs.Close)
	big := `{"input":"` + strings.Repeat("x", 5000) + `"}`
	tests := []struct {
		route, body string
		status      int
		param       string
	}{
		{"/v1/moderations", `{"input":`, 400, ""},
		{"/v1/moderations", `[1,2]`, 400, ""},
		{"/v1/moderations", `{"input":42}`, 400, "input"},
		{"/v1/moderations", `{"input":[]}`, 400, "input"},
		{"/v1/moderations", `{"input":""}`, 400, "input"},
		{"/v1/moderations", `{"input":[{"type":"audio"}]}`, 400, "input"},
		{"/v1/moderations", `{"model":7,"input":"x"}`, 400, "model"},
		{"/v1/moderations", `{}`, 400, "input"},
		{"/v1/moderations", `{"model":"nope","input":"x"}`, 404, "model"},
		{"/v1/moderations", big, 413, ""},
		{"/v1/images/generations", `{"prompt":"x",`, 400, ""},
		{"/v1/images/generations", `{"n":1}`, 400, "prompt"},
		{"/v1/images/generations", `{"prompt":3}`, 400, "prompt"},
		{"/v1/images/generations", `{"prompt":"x","n":11}`, 400, "n"},
		{"/v1/images/generations", `{"prompt":"x","n":"2"}`, 400, "n"},
		{"/v1/images/generations", `{"prompt":"x","response_format":"png"}`, 400, "response_format"},
		{"/v1/images/generations", `{"prompt":"x","size":1024}`, 400, "size"},
		{"/v1/images/generations", `{"prompt":"x","stream":true}`, 400, "stream"},
		{"/v1/images/generations", `{"prompt":"x","model":"dall-e-3"}`, 404, "model"},
		{"/v1/rerank", `{"model":"rerank","query":"q"}`, 400, "documents"},
		{"/v1/rerank", `{"query":"q","documents":["a"]}`, 400, "model"},
		{"/v1/rerank", `{"model":"rerank","query":"","documents":["a"]}`, 400, "query"},
		{"/v1/rerank", `{"model":"rerank","query":"q","documents":[]}`, 400, "documents"},
		{"/v1/rerank", `{"model":"rerank","query":"q","documents":[1]}`, 400, "documents"},
		{"/v1/rerank", `{"model":"rerank","query":"q","documents":"a"}`, 400, "documents"},
		{"/v1/rerank", `{"model":"rerank","query":"q","documents":["a"],"top_n":0}`, 400, "top_n"},
		{"/v1/rerank", `{"model":"rerank","query":"q","documents":["a"],"return_documents":"yes"}`, 400, "return_documents"},
		{"/v1/rerank", `{"model":"default","query":"q","documents":["a"]}`, 404, "model"},
		{"/v1/rerank", `{"model":"oai/rerank-v3.5","query":"q","documents":["a"]}`, 404, "model"}, // kind openai serves no rerank
		{"/v1/moderations", `{"model":"oai/omni-moderation-latest","input":"x","extra":`, 400, ""},
	}
	for _, tt := range tests {
		r := do(t, "POST", gs.URL+tt.route, "", tt.body)
		var e struct {
			Error struct {
				Message, Type string
				Param         *string
			}
		}
		if r.status != tt.status || json.Unmarshal(r.body, &e) != nil || e.Error.Message == "" || e.Error.Type == "" ||
			(tt.param != "" && (e.Error.Param == nil || *e.Error.Param != tt.param)) {
			t.Errorf("%s %.60s: got %d %s, want %d in OpenAI's error shape (param %q)", tt.route, tt.body, r.status, r.body, tt.status, tt.param)
		}
	}
}

// Every route of the table is a path of api/openapi.yaml (its parameters named as the spec
// likes).
func TestRouteTableInSpec(t *testing.T) {
	doc := loadSpec(t)
	param := regexp.MustCompile(`\{[^}/]+\}|:[^/]+`)
	spec := map[string]bool{}
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			spec[m+" "+param.ReplaceAllString(p, "{}")] = true
		}
	}
	for _, api := range server.Wires {
		for _, rt := range api.Routes {
			if strings.Contains(rt.Path, "*") {
				continue // Gemini's {model}:{method} and the model list's rest
			}
			if !spec[rt.Method+" "+param.ReplaceAllString(rt.Path, "{}")] {
				t.Errorf("%s %s (%s) is not in api/openapi.yaml", rt.Method, rt.Path, api.Name)
			}
		}
	}
}

// A key reaches the plain endpoints' aliases its models name, and no other (403), and its
// budget, spent per image at the price table's unit price, refuses the image that would pass
// it (429 budget_exceeded); the cost of each image is in X-Sluice-Cost-Usd.
func TestPlainEndpointsKeyAndBudget(t *testing.T) {
	secret := auth.NewSecret()
	yaml := plainSim + `prices:
  sim/image: {unit: 0.5}
keys: [{name: painter, hash: ` + auth.Hash(secret) + `, models: [dall-e-2, omni-moderation-latest], budget: {daily_usd: 1}}]
`
	url := serveGate(t, yaml, nil, time.Hour, nil)
	if r := do(t, "POST", url+"/v1/rerank", secret, `{"model":"rerank","query":"q","documents":["a"]}`); r.status != http.StatusForbidden || r.errCode() != "model_not_allowed" {
		t.Errorf("rerank, not the key's: got %d %s, want 403 model_not_allowed", r.status, r.body)
	}
	if r := do(t, "POST", url+"/v1/moderations", secret, `{"input":"hello"}`); r.status != http.StatusOK {
		t.Errorf("moderation: got %d %s", r.status, r.body)
	}
	for i, want := range []int{200, 200, 429} {
		r := do(t, "POST", url+"/v1/images/generations", secret, `{"prompt":"a lighthouse"}`)
		if r.status != want {
			t.Fatalf("image %d: got %d %s, want %d", i, r.status, r.body, want)
		}
		if want == 200 && r.header.Get("X-Sluice-Cost-Usd") != "0.5" {
			t.Errorf("image %d: X-Sluice-Cost-Usd %q, want 0.5", i, r.header.Get("X-Sluice-Cost-Usd"))
		}
		if want == 429 && r.errCode() != "budget_exceeded" {
			t.Errorf("image %d: got %s, want budget_exceeded", i, r.body)
		}
	}
}
