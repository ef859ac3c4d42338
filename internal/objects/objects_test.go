package objects

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/batches"
	"github.com/sluice-gw/sluice/internal/dialect/files"
	"github.com/sluice-gw/sluice/internal/dialect/msgbatches"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/openai"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/usage"
)

var (
	alice = &auth.Key{ID: "k-alice", Models: []string{"*"}, Team: ""}
	bob   = &auth.Key{ID: "k-bob", Models: []string{"*"}}
)

// replica is a Service over the fake upstream, through the real adapters, with store.
func replica(t *testing.T, url string, store dialect.Store) *Service {
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	t.Helper()
	scrub := llm.Scrub(func(s string) string { return strings.ReplaceAll(s, upstreamKey, "[MASKED]") })
	oa := openai.New(openai.Config{Name: "oa", BaseURL: url + "/v1", APIKey: upstreamKey, Scrub: scrub, HTTPClient: hc})
	an := anthropic.New(anthropic.Config{Name: "an", BaseURL: url, APIKey: upstreamKey, Scrub: scrub, HTTPClient: hc})
	an2 := anthropic.New(anthropic.Config{Name: "an2", BaseURL: url, APIKey: upstreamKey, Scrub: scrub, HTTPClient: hc})
	aliases := map[string][]string{"batchy": {"sim/echo", "oa/gpt-4o-mini"}, "claude": {"an/claude-sonnet-4-5"}, "plain": {"sim/echo"},
		"haiku": {"an2/claude-haiku-4-5"}, "mixed": {"oa/gpt-4o-mini", "an/claude-sonnet-4-5"}}
	dir := &Directory{Hosts: map[string]llm.ObjectHost{"oa": oa, "an": an, "an2": an2}, Anthropic: map[string]bool{"an": true, "an2": true}, Targets: func(a string) ([]string, bool) {
		ts, ok := aliases[a]
		return ts, ok
	}}
	return &Service{Hosts: dir, State: dialect.State{Store: store}, Model: "batchy", AnthropicModel: "claude",
		MaxUpload: func(string) int64 { return 64 << 10 }}
}

var policy = &admit.Policy{Prices: usage.NewPrices(map[string]usage.Price{"gpt-4o-mini": {Input: 2, Output: 8},
	"claude-sonnet-4-5": {Input: 3, Output: 15}})}

// answer is a response and the request's access record.
type answer struct {
	status int
	body   string
	header http.Header
	rec    *telemetry.Access
}

// call serves a request of route (its :id id) by key with body of type ctype.
func call(t *testing.T, s *Service, key *auth.Key, method, route, id string, body io.Reader, ctype string) answer {
	t.Helper()
	return callWith(t, policy, s, key, method, route, id, body, ctype)
}

// callWith is call, admitted by p.
func callWith(t *testing.T, p *admit.Policy, s *Service, key *auth.Key, method, route, id string, body io.Reader, ctype string) answer {
	t.Helper()
	path := strings.Replace(route, ":id", id, 1) // route may end in ?query
	route, _, _ = strings.Cut(route, "?")
	r := httptest.NewRequest(method, "http://gw.test"+path, body)
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	api := &files.API
	if strings.HasPrefix(route, msgbatches.Path) {
		api = &msgbatches.API
	}
	rec := &telemetry.Access{}
	if key != nil {
		rec.KeyID = key.ID
	}
	reject := func(err error) error {
		status, b := api.Error(err, nil)
		w.WriteHeader(status)
		w.Write(b)
		return nil
	}
	if err := s.Serve(w, r, func(string) string { return id }, route, key, rec, p, reject); err != nil {
		t.Fatal(err)
	}
	return answer{w.Code, w.Body.String(), w.Header(), rec}
}

// upload is a multipart body with the file first, then purpose (the Node SDK's order).
func upload(content string) (*bytes.Buffer, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	io.WriteString(fw, content)
	mw.WriteField("purpose", "batch")
	mw.Close()
	return &b, mw.FormDataContentType()
}

// id is the member id of a JSON answer.
func field(t *testing.T, body, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	s, _ := m[name].(string)
	return s
}

const input = "{\"custom_id\":\"r0\"}\n{\"custom_id\":\"r1\"}\n{\"custom_id\":\"r2\"}\n"

// A file uploaded, a batch made of it, its output read: the ids are the gateway's, each
// object the maker's key's alone (another key: 404 as an unknown id, and lists without
// it), the output's usage charged once at half price (issue 48).
func TestFilesAndBatches(t *testing.T) {
	_, srv := newFake(t)
	s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
	body, ct := upload(input)
	up := call(t, s, alice, "POST", files.Path, "", body, ct)
	fid := field(t, up.body, "id")
	if up.status != 200 || !strings.HasPrefix(fid, FilePrefix) || !strings.Contains(up.body, `"purpose":"batch"`) {
		t.Fatalf("upload: %d %s", up.status, up.body)
	}
	if name, upID, ok := Decode(FilePrefix, fid); !ok || name != "oa" || upID != "file-up1" {
		t.Errorf("file id %q decodes to %q %q", fid, name, upID)
	}
	if a := call(t, s, alice, "GET", files.One, fid, nil, ""); a.status != 200 || field(t, a.body, "id") != fid {
		t.Errorf("get: %d %s", a.status, a.body)
	}
	if a := call(t, s, alice, "GET", files.Path, "", nil, ""); !strings.Contains(a.body, fid) {
		t.Errorf("alice's list lacks her file: %s", a.body)
	}
	if a := call(t, s, bob, "GET", files.Path, "", nil, ""); a.status != 200 || strings.Contains(a.body, fid) {
		t.Errorf("bob's list: %d %s, want without alice's file", a.status, a.body)
	}
	for _, route := range []string{files.One, files.Content} {
		a := call(t, s, bob, "GET", route, fid, nil, "")
		if a.status != 404 || field(t, a.body, "error") != "" || !strings.Contains(a.body, `"invalid_request_error"`) {
			t.Errorf("bob's GET %s: %d %s, want OpenAI's 404", route, a.status, a.body)
		}
	}
	if a := call(t, s, bob, "POST", batches.Path, "", strings.NewReader(`{"input_file_id":"`+fid+`","endpoint":"/v1/chat/completions"}`), "application/json"); a.status != 404 {
		t.Errorf("bob's batch of alice's file: %d %s, want 404", a.status, a.body)
	}

	b := call(t, s, alice, "POST", batches.Path, "", strings.NewReader(`{"input_file_id":"`+fid+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`), "application/json")
	bid, out := field(t, b.body, "id"), field(t, b.body, "output_file_id")
	if b.status != 200 || !strings.HasPrefix(bid, BatchPrefix) || field(t, b.body, "input_file_id") != fid || !strings.HasPrefix(out, FilePrefix) {
		t.Fatalf("create batch: %d %s", b.status, b.body)
	}
	if a := call(t, s, bob, "GET", batches.One, bid, nil, ""); a.status != 404 {
		t.Errorf("bob's get of alice's batch: %d", a.status)
	}
	if a := call(t, s, alice, "GET", batches.One, bid, nil, ""); a.status != 200 || field(t, a.body, "output_file_id") != out {
		t.Errorf("get batch: %d %s", a.status, a.body)
	}
	if a := call(t, s, bob, "GET", files.Content, out, nil, ""); a.status != 404 {
		t.Errorf("bob reads alice's output: %d", a.status)
	}
	first := call(t, s, alice, "GET", files.Content, out, nil, "")
	if first.status != 200 || strings.Count(first.body, "\n") != 3 {
		t.Fatalf("output: %d %q", first.status, first.body)
	}
	// 3 lines of 1000 + 1000 tokens at $2 and $8 per million, half price: $0.015.
	if got := first.rec.CostUSD; got < 0.01499 || got > 0.01501 || first.rec.Usage == nil || first.rec.Usage.Prompt != 3000 {
		t.Errorf("first read charged %v (%+v), want $0.015 for 3000+3000 tokens", got, first.rec.Usage)
	}
	if again := call(t, s, alice, "GET", files.Content, out, nil, ""); again.body != first.body || again.rec.CostUSD != 0 {
		t.Errorf("second read charged %v, want 0 (each line once)", again.rec.CostUSD)
	}
	if a := call(t, s, alice, "DELETE", files.One, fid, nil, ""); a.status != 200 || field(t, a.body, "id") != fid {
		t.Errorf("delete: %d %s", a.status, a.body)
	}
	if a := call(t, s, alice, "GET", files.One, fid, nil, ""); a.status != 404 {
		t.Errorf("get after delete: %d", a.status)
	}
}

// Bad input is a 4xx in the wire's shape, never a 5xx, and the upstream's words never
// carry its key.
func TestBadInput(t *testing.T) {
	f, srv := newFake(t)
	s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
	good, ct := upload(input)
	whole := good.String()
	boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
	big, bigCT := upload(strings.Repeat("x", 65<<10))
	tests := []struct {
		name         string
		method, path string
		id           string
		body         io.Reader
		ctype        string
		status       int
	}{
		{"json upload", "POST", files.Path, "", strings.NewReader(`{"file":"x"}`), "application/json", 400},
		{"no boundary", "POST", files.Path, "", strings.NewReader(whole), "multipart/form-data", 400},
		{"truncated multipart", "POST", files.Path, "", strings.NewReader(whole[:len(whole)/2]), ct, 400},
		{"no closing boundary", "POST", files.Path, "", strings.NewReader(strings.TrimSuffix(whole, "--"+boundary+"--\r\n")), ct, 400},
		{"no file", "POST", files.Path, "", strings.NewReader("--" + boundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" + boundary + "--\r\n"), ct, 400},
		{"oversize", "POST", files.Path, "", io.MultiReader(big), bigCT, 413},
		{"unknown model", "POST", files.Path + "?model=nope", "", strings.NewReader(whole), ct, 404},
		{"model keeps no files", "POST", files.Path + "?model=plain", "", strings.NewReader(whole), ct, 404},
		{"unknown file", "GET", files.One, Encode(FilePrefix, "oa", "file-zzz"), nil, "", 404},
		{"not an id", "GET", files.One, "file-%25%25", nil, "", 404},
		{"gone host", "GET", files.Content, Encode(FilePrefix, "gone", "file-1"), nil, "", 404},
		{"batch not json", "POST", batches.Path, "", strings.NewReader("input_file_id=x"), "text/plain", 400},
		{"batch bad json", "POST", batches.Path, "", strings.NewReader("{"), "application/json", 400},
		{"batch no file", "POST", batches.Path, "", strings.NewReader("{}"), "application/json", 400},
		{"batch unknown file", "POST", batches.Path, "", strings.NewReader(`{"input_file_id":"file-abc"}`), "application/json", 404},
		{"unknown batch", "POST", batches.Cancel, "batch_x", nil, "", 404},
		{"bad cursor", "GET", batches.Path + "?after=zzz", "", nil, "", 400},
		{"message batch not json", "POST", msgbatches.Path, "", strings.NewReader("x"), "text/plain", 400},
		{"message batch malformed", "POST", msgbatches.Path, "", strings.NewReader(`{"requests":[{"custom_id":"a"}]}`), "application/json", 400},
		{"message batch empty", "POST", msgbatches.Path, "", strings.NewReader(`{"requests":[]}`), "application/json", 400},
		{"message batch cut", "POST", msgbatches.Path, "", strings.NewReader(`{"requests":[{"custom_id":"a","params":{"model":"claude"`), "application/json", 400},
		{"message batch unknown model", "POST", msgbatches.Path, "", strings.NewReader(`{"requests":[{"custom_id":"a","params":{"model":"nope"}}]}`), "application/json", 404},
		{"message batch of an OpenAI model", "POST", msgbatches.Path, "", strings.NewReader(`{"requests":[{"custom_id":"a","params":{"model":"batchy"}}]}`), "application/json", 404},
		{"message batch of an OpenAI provider", "POST", msgbatches.Path, "", strings.NewReader(`{"requests":[{"custom_id":"a","params":{"model":"oa/gpt-4o"}}]}`), "application/json", 404},
		{"message batches listed of an OpenAI model", "GET", msgbatches.Path + "?model=batchy", "", nil, "", 404},
		{"upload to an Anthropic model", "POST", files.Path + "?model=claude", "", strings.NewReader(whole), ct, 404},
		{"batches listed of an Anthropic provider", "GET", batches.Path + "?model=an/claude-sonnet-4-5", "", nil, "", 404},
		{"unknown message batch", "GET", msgbatches.Results, Encode(MsgBatchPrefix, "an", "msgbatch_x"), nil, "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, s, alice, tt.method, tt.path, tt.id, tt.body, tt.ctype)
			route := tt.path
			if a.status != tt.status || strings.Contains(a.body, upstreamKey) {
				t.Errorf("got %d %s, want %d", a.status, a.body, tt.status)
			}
			wire := `"error":{"message"`
			if strings.HasPrefix(route, msgbatches.Path) {
				wire = `"type":"error"`
			}
			if !strings.Contains(a.body, wire) {
				t.Errorf("body %s is not in the wire's error shape", a.body)
			}
		})
	}
	if f.n != 0 {
		t.Errorf("the upstream made %d objects of bad input", f.n)
	}
}

// Two replicas (one shared store) read a batch's output at once, each twice: every result
// line is charged exactly once in all (issue 48).
func TestOneSettlePerLine(t *testing.T) {
	_, srv := newFake(t)
	store := &cache.Memory{MaxBytes: 1 << 20}
	a, b := replica(t, srv.URL, store), replica(t, srv.URL, store)
	body, ct := upload(strings.Repeat("{\"custom_id\":\"x\"}\n", 40))
	fid := field(t, call(t, a, alice, "POST", files.Path, "", body, ct).body, "id")
	bt := call(t, b, alice, "POST", batches.Path, "", strings.NewReader(`{"input_file_id":"`+fid+`","endpoint":"/v1/chat/completions"}`), "application/json")
	out := field(t, bt.body, "output_file_id")
	var mu sync.Mutex
	var total float64
	var wg sync.WaitGroup
	for _, s := range []*Service{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := call(t, s, alice, "GET", files.Content, out, nil, "")
			if r.status != 200 || strings.Count(r.body, "\n") != 40 {
				t.Errorf("read: %d, %d lines", r.status, strings.Count(r.body, "\n"))
			}
			mu.Lock()
			total += r.rec.CostUSD
			mu.Unlock()
		}()
	}
	wg.Wait()
	if want := 40 * 0.005; total < want-1e-9 || total > want+1e-9 {
		t.Errorf("charged $%v in all, want $%v: each of the 40 lines once", total, want)
	}
}

// A message batch goes to the Anthropic target of its requests' model, which the upstream
// gets as the target's model; requests of two providers are a 400; its results_url is the
// gateway's; its results are charged at half price once; another key gets a 404 in
// Anthropic's shape.
func TestMessageBatches(t *testing.T) {
	f, srv := newFake(t)
	s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
	two := `{"requests":[{"custom_id":"a","params":{"model":"claude","max_tokens":9,"messages":[]}},` +
		`{"custom_id":"b","params":{"model":"haiku","max_tokens":9,"messages":[]}}]}`
	if a := call(t, s, alice, "POST", msgbatches.Path, "", strings.NewReader(two), "application/json"); a.status != 400 || !strings.Contains(a.body, "invalid_request_error") {
		t.Errorf("two providers: %d %s, want 400", a.status, a.body)
	}
	one := `{"requests":[{"custom_id":"a","params":{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}},` +
		`{"custom_id":"b","params":{"model":"mixed","max_tokens":9,"messages":[]}}]}` // mixed: its Anthropic target
	c := call(t, s, alice, "POST", msgbatches.Path, "", strings.NewReader(one), "application/json")
	id := field(t, c.body, "id")
	if c.status != 200 || !strings.HasPrefix(id, MsgBatchPrefix) || field(t, c.body, "results_url") != "http://gw.test/v1/messages/batches/"+id+"/results" {
		t.Fatalf("create: %d %s", c.status, c.body)
	}
	if strings.Join(f.models, ",") != "claude-sonnet-4-5,claude-sonnet-4-5" {
		t.Errorf("the upstream got models %v, want the target's", f.models)
	}
	for _, route := range []string{msgbatches.One, msgbatches.Results} {
		if a := call(t, s, bob, "GET", route, id, nil, ""); a.status != 404 || !strings.Contains(a.body, `"not_found_error"`) {
			t.Errorf("bob's GET %s: %d %s", route, a.status, a.body)
		}
	}
	r := call(t, s, alice, "GET", msgbatches.Results, id, nil, "")
	// 1000 + 1000 tokens at $3 and $15 per million, half price; the errored line is free.
	if r.status != 200 || strings.Count(r.body, "\n") != 2 || r.rec.CostUSD < 0.00899 || r.rec.CostUSD > 0.00901 {
		t.Errorf("results: %d, charged $%v, want $0.009", r.status, r.rec.CostUSD)
	}
	if again := call(t, s, alice, "GET", msgbatches.Results, id, nil, ""); again.rec.CostUSD != 0 {
		t.Errorf("second read charged $%v", again.rec.CostUSD)
	}
	if a := call(t, s, alice, "GET", msgbatches.Path, "", nil, ""); a.status != 200 || !strings.Contains(a.body, `"id":"`+id+`"`) || field(t, a.body, "last_id") != id {
		t.Errorf("alice's list: %d %s", a.status, a.body)
	}
	if a := call(t, s, bob, "GET", msgbatches.Path, "", nil, ""); a.status != 200 || strings.Contains(a.body, `"id":"`+id+`"`) {
		t.Errorf("bob's list: %d %s", a.status, a.body)
	}
}

// FuzzMultipart: whatever an upload's body, reading and re-encoding it never panics, and
// what it accepts the host can read back: the file's bytes, within the limit.
func FuzzMultipart(f *testing.F) {
	good, ct := upload(input)
	boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
	f.Add(good.Bytes(), boundary)
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\\\"b\"\r\n\r\nx\r\n--b--\r\n"), "b")
	f.Add([]byte("--b\r\n\r\n--b--"), "b")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		if boundary == "" {
			return
		}
		model := ""
		form, err := readForm(multipart.NewReader(bytes.NewReader(body), boundary), &model)
		if err != nil {
			checkClient(t, err)
			return
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		n, err := form.copy(mw, 1<<10)
		if err != nil {
			checkClient(t, err)
			return
		}
		mw.Close()
		mr := multipart.NewReader(&buf, mw.Boundary())
		p, err := mr.NextPart()
		for err == nil && p.FormName() != "file" {
			p, err = mr.NextPart()
		}
		if err != nil {
			t.Fatalf("the re-encoded body has no file: %v", err)
		}
		if got, _ := io.Copy(io.Discard, p); got != n || n > 1<<10 {
			t.Errorf("file of %d bytes re-encoded as %d", n, got)
		}
	})
}

// checkClient fails unless err is a 4xx for the client.
func checkClient(t *testing.T, err error) {
	t.Helper()
	if s := llm.HTTPStatus(unwrapClient(err)); s < 400 || s >= 500 {
		t.Fatalf("got %v (status %d), want a 4xx", err, s)
	}
}

// A key whose budget its batches' results spent gets its next batch refused at creation
// (429 budget_exceeded, in OpenAI's shape) before the upstream sees it.
func TestBatchBudget(t *testing.T) {
	f, srv := newFake(t)
	s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
	saved := policy
	policy = &admit.Policy{Prices: saved.Prices, Budgets: &usage.MemoryBudgets{}}
	defer func() { policy = saved }()
	poor := &auth.Key{ID: "k-poor", Name: "poor", Models: []string{"*"}, DailyUSD: 0.01}
	body, ct := upload(input)
	fid := field(t, call(t, s, poor, "POST", files.Path, "", body, ct).body, "id")
	create := `{"input_file_id":"` + fid + `","endpoint":"/v1/chat/completions"}`
	b := call(t, s, poor, "POST", batches.Path, "", strings.NewReader(create), "application/json")
	if b.status != 200 {
		t.Fatalf("first batch: %d %s", b.status, b.body)
	}
	if r := call(t, s, poor, "GET", files.Content, field(t, b.body, "output_file_id"), nil, ""); r.rec.CostUSD < 0.0149 {
		t.Fatalf("results charged $%v, want $0.015", r.rec.CostUSD)
	}
	a := call(t, s, poor, "POST", batches.Path, "", strings.NewReader(create), "application/json")
	if a.status != 429 || !strings.Contains(a.body, "budget_exceeded") {
		t.Errorf("over budget: %d %s, want 429 budget_exceeded", a.status, a.body)
	}
	if len(f.batches) != 1 {
		t.Errorf("the upstream got %d batches, want the first only", len(f.batches))
	}
}

// An object the gateway recorded that the upstream no longer has is the wire's 404, the
// upstream's words (which quote its key) not shown.
func TestUpstreamLost(t *testing.T) {
	f, srv := newFake(t)
	s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
	body, ct := upload(input)
	fid := field(t, call(t, s, alice, "POST", files.Path, "", body, ct).body, "id")
	f.mu.Lock()
	clear(f.files)
	f.mu.Unlock()
	for _, route := range []string{files.One, files.Content} {
		if a := call(t, s, alice, "GET", route, fid, nil, ""); a.status != 404 || strings.Contains(a.body, upstreamKey) || !strings.Contains(a.body, fid) {
			t.Errorf("GET %s of a lost file: %d %s", route, a.status, a.body)
		}
	}
}

// An emulated host's batch (an alias's batch: emulate) ran each line through the chain,
// which accounted it: its output file is read whole and charged nothing more.
func TestEmulatedNotChargedTwice(t *testing.T) {
	_, srv := newFake(t)
	s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
	host := s.Hosts.(*Directory).Hosts["oa"] // the fake upstream speaks OpenAI's files and batches
	s.Hosts.(*Directory).Emulated = func(alias string) (llm.ObjectHost, bool) { return host, alias == "emu" }
	body, ct := upload(input)
	f := call(t, s, alice, "POST", files.Path+"?model=emu", "", body, ct)
	if name, _, _ := Decode(FilePrefix, field(t, f.body, "id")); name != EmulatePrefix+"emu" {
		t.Fatalf("upload %d %s: host %q, want the emulated one", f.status, f.body, name)
	}
	bt := call(t, s, alice, "POST", batches.Path, "", strings.NewReader(`{"input_file_id":"`+field(t, f.body, "id")+`","endpoint":"/v1/chat/completions"}`), "application/json")
	r := call(t, s, alice, "GET", files.Content, field(t, bt.body, "output_file_id"), nil, "")
	if r.status != 200 || strings.Count(r.body, "\n") != 3 || r.rec.CostUSD != 0 {
		t.Errorf("output: %d, %d lines, $%v; want 200, 3 lines, nothing charged", r.status, strings.Count(r.body, "\n"), r.rec.CostUSD)
	}
}
