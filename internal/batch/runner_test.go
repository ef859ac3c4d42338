package batch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// lines is an input file of n chat lines, custom ids c0 to c(n-1).
func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"custom_id":"c%d","method":"POST","url":"/v1/chat/completions","body":{"model":"sim","messages":[{"role":"user","content":"line %d"}]}}`+"\n", i, i)
	}
	return b.String()
}

// upstream is the gateway's handler as the runner sees it: it answers each chat line with
// usage of 3 and 5 tokens, and counts the calls of each custom id and who made them.
type upstream struct {
	mu    sync.Mutex
	calls map[string]int
	keys  map[string]bool
	// records are the account record ids of each message's calls (usage.WithRecord).
	records map[string][]string
	hold    chan struct{} // when set, each call waits for it (or for its request to end)
	slow    string        // the message of a line that takes slowFor (or until its request ends)
}

// slowFor is how long the upstream's slow line takes: three leases of TestBatchSlowLine.
const slowFor = 3 * time.Second

func newUpstream() *upstream {
	return &upstream{calls: map[string]int{}, keys: map[string]bool{}, records: map[string][]string{}}
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.hold != nil {
		select {
		case <-u.hold:
		case <-r.Context().Done():
			w.WriteHeader(499)
			return
		}
	}
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	msg := ""
	if len(body.Messages) > 0 {
		msg = body.Messages[0].Content
	}
	u.mu.Lock()
	u.calls[msg]++
	u.records[msg] = append(u.records[msg], usage.RecordOf(r.Context()))
	u.mu.Unlock()
	if msg != "" && msg == u.slow {
		select {
		case <-time.After(slowFor):
		case <-r.Context().Done():
			w.WriteHeader(499)
			return
		}
	}
	u.mu.Lock()
	if k := auth.KeyFrom(r.Context()); k != nil {
		u.keys[k.ID] = true
	}
	u.mu.Unlock()
	w.Header().Set("X-Request-Id", "req_"+strings.ReplaceAll(msg, " ", "_"))
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(msg, " 3") {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`, msg)
}

func (u *upstream) callsOf(msg string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[msg]
}

// runner is a runner of s through h, polling fast, stopped at cleanup; with sets more of
// it before it starts.
func runner(t *testing.T, s batch.Store, h http.Handler, lease time.Duration, with ...func(*batch.Runner)) *batch.Runner {
	r := &batch.Runner{Store: s, Poll: 5 * time.Millisecond, Lease: lease, Workers: 3,
		Rate: func(string) int { return 1000 },
		Key: func(_ context.Context, id string) (*auth.Key, error) {
			for _, k := range []*auth.Key{alice, bob} {
				if k.ID == id {
					return k, nil
				}
			}
			return nil, auth.ErrNotFound
		}}
	for _, w := range with {
		w(r)
	}
	r.Start(h)
	t.Cleanup(func() { r.Close() })
	return r
}

// batchObj is what a test reads of a batch.
type batchObj struct {
	ID            string                                 `json:"id"`
	Status        string                                 `json:"status"`
	OutputFileID  string                                 `json:"output_file_id"`
	ErrorFileID   string                                 `json:"error_file_id"`
	RequestCounts struct{ Total, Completed, Failed int } `json:"request_counts"`
	Usage         *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
	Errors *struct {
		Data []struct {
			Code string
			Line int
		}
	}
	Metadata     map[string]string `json:"metadata"`
	InProgressAt *int64            `json:"in_progress_at"`
	CompletedAt  *int64            `json:"completed_at"`
	CancelledAt  *int64            `json:"cancelled_at"`
}

// start uploads input and creates a batch of it, as alice.
func start(t *testing.T, h llm.ObjectHost, input string) batchObj {
	t.Helper()
	f, err := upload(t, h, as(alice), "batch", "in.jsonl", strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"input_file_id":%q,"endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"job":"nightly"}}`, f["id"])
	var b batchObj
	mustCall(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches", ContentType: "application/json", Body: strings.NewReader(body)}, &b)
	if b.Status != "validating" || !strings.HasPrefix(b.ID, "batch_") || b.Metadata["job"] != "nightly" {
		t.Fatalf("create: got %+v", b)
	}
	return b
}

// await polls batch id until its status is one of want.
func await(t *testing.T, h llm.ObjectHost, id string, want ...string) batchObj {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var b batchObj
	for time.Now().Before(deadline) {
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches/" + id}, &b)
		for _, w := range want {
			if b.Status == w {
				return b
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("batch %s: status %s after 60s, want %v", id, b.Status, want)
	return b
}

// results reads a result file: its lines by custom id, failing on a custom id seen twice.
func results(t *testing.T, h llm.ObjectHost, id string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	if id == "" {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(content(t, h, as(alice), id)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("result line %s: %v", sc.Bytes(), err)
		}
		cid, _ := l["custom_id"].(string)
		if out[cid] != nil {
			t.Errorf("custom_id %s answered twice", cid)
		}
		out[cid] = l
	}
	return out
}

// checkAnswered checks that every line of an n-line batch b is answered once, in the
// output file or (line 3) the error file, with its usage.
func checkAnswered(t *testing.T, h llm.ObjectHost, b batchObj, n int) {
	t.Helper()
	out, bad := results(t, h, b.OutputFileID), results(t, h, b.ErrorFileID)
	if len(out)+len(bad) != n {
		t.Errorf("got %d results and %d errors, want %d lines answered", len(out), len(bad), n)
	}
	for i := range n {
		cid := fmt.Sprintf("c%d", i)
		l, in := out[cid], "output"
		if i == 3 {
			l, in = bad[cid], "error"
		}
		if l == nil {
			t.Errorf("line %s: not in the %s file", cid, in)
			continue
		}
		resp, _ := l["response"].(map[string]any)
		if id, _ := l["id"].(string); !strings.HasPrefix(id, "batch_req_") || resp == nil || l["error"] != nil {
			t.Errorf("line %s: got %v", cid, l)
			continue
		}
		if want := "req_line_" + strconv(i); resp["request_id"] != want {
			t.Errorf("line %s: request_id %v, want %s", cid, resp["request_id"], want)
		}
		body, _ := resp["body"].(map[string]any)
		if i == 3 && (resp["status_code"] != float64(400) || body["error"] == nil) {
			t.Errorf("line %s: got %v, want a 400 with its error body", cid, resp)
		}
		if i != 3 && (resp["status_code"] != float64(200) || body["object"] != "chat.completion") {
			t.Errorf("line %s: got %v, want a 200 with its completion", cid, resp)
		}
	}
	rc := b.RequestCounts
	if rc.Total != n || rc.Completed != n-1 || rc.Failed != 1 {
		t.Errorf("request_counts: got %+v, want %d total, %d completed, 1 failed", rc, n, n-1)
	}
	if b.Usage == nil || b.Usage.InputTokens != 3*(n-1) || b.Usage.OutputTokens != 5*(n-1) {
		t.Errorf("usage: got %+v, want %d in, %d out", b.Usage, 3*(n-1), 5*(n-1))
	}
}

func strconv(i int) string { return fmt.Sprint(i) }

// A batch runs to completed: validating, in_progress, finalizing, completed; every line
// answered once, as its owner's request; its output and error files are its owner's.
func TestBatchCompletes(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(37))
		runner(t, newStore(), up, time.Minute)
		b = await(t, h, b.ID, "completed")
		if b.InProgressAt == nil || b.CompletedAt == nil {
			t.Errorf("timestamps: got %+v", b)
		}
		checkAnswered(t, h, b, 37)
		for i := range 37 {
			if n := up.callsOf(fmt.Sprintf("line %d", i)); n != 1 {
				t.Errorf("line %d: called %d times, want once", i, n)
			}
		}
		if !up.keys[alice.ID] || len(up.keys) != 1 {
			t.Errorf("lines ran as %v, want alice's key only", up.keys)
		}
		if _, err := h.Object(as(bob), llm.ObjectCall{Method: "GET", Path: "files/" + b.OutputFileID + "/content"}); llm.KindOf(err) != llm.NotFound {
			t.Errorf("the output file as another key: got %v, want NotFound", err)
		}
		var l struct {
			Data    []batchObj
			HasMore bool `json:"has_more"`
		}
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches"}, &l)
		if len(l.Data) != 1 || l.Data[0].ID != b.ID || l.HasMore {
			t.Errorf("list: got %+v", l)
		}
		if err := call(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches/" + b.ID + "/cancel"}, nil); llm.HTTPStatus(err) != 400 {
			t.Errorf("cancel of a completed batch: got %v, want a 400", err)
		}
	})
}

// An input file with a bad line fails validation, with the line and code of each error.
func TestBatchFails(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		input := lines(2) + "not json\n" + `{"custom_id":"c0","method":"POST","url":"/v1/chat/completions","body":{}}` + "\n"
		b := start(t, h, input)
		runner(t, newStore(), newUpstream(), time.Minute)
		b = await(t, h, b.ID, "failed")
		if b.Errors == nil || len(b.Errors.Data) != 2 || b.Errors.Data[0].Code != "invalid_json_line" || b.Errors.Data[0].Line != 3 ||
			b.Errors.Data[1].Code != "duplicate_custom_id" || b.Errors.Data[1].Line != 4 {
			t.Errorf("errors: got %+v", b.Errors)
		}
	})
}

// A cancelled batch stops: cancelling while a line runs, then cancelled, its unrun lines in
// the error file as batch_cancelled.
func TestBatchCancel(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		up.hold = make(chan struct{})
		b := start(t, h, lines(40))
		runner(t, newStore(), up, time.Minute)
		await(t, h, b.ID, "in_progress")
		var c batchObj
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches/" + b.ID + "/cancel"}, &c)
		if c.Status != "cancelling" {
			t.Errorf("cancel: got %s, want cancelling", c.Status)
		}
		close(up.hold)
		c = await(t, h, b.ID, "cancelled")
		out, bad := results(t, h, c.OutputFileID), results(t, h, c.ErrorFileID)
		if len(out)+len(bad) != 40 || c.CancelledAt == nil {
			t.Errorf("got %d results and %d errors, want the 40 lines", len(out), len(bad))
		}
		cancelled := 0
		for _, l := range bad {
			if e, _ := l["error"].(map[string]any); e != nil && e["code"] == "batch_cancelled" {
				cancelled++
			}
		}
		if cancelled == 0 {
			t.Errorf("got %d lines batch_cancelled, want the lines not run", cancelled)
		}
	})
}

// A runner stopped midway (a replica restarting) leaves its lines to a new runner on the
// same store: the batch completes, each line answered once.
func TestBatchResumes(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(60))
		r1 := runner(t, newStore(), up, 100*time.Millisecond)
		awaitCompleted(t, h, b.ID, 10)
		r1.Close()
		runner(t, newStore(), up, 100*time.Millisecond)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 60)
	})
}

// TestBatchHandBack: a runner that closes hands its unfinished parts back, so that the next
// runner takes them at once, not after their lease (an hour here): a rolling restart.
func TestBatchHandBack(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(60))
		r1 := runner(t, newStore(), up, time.Hour)
		awaitCompleted(t, h, b.ID, 10)
		r1.Close()
		runner(t, newStore(), up, time.Hour)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 60)
	})
}

// TestLeaseHandBack: Renew with a lease below zero lets the lease lapse now, in every store.
func TestLeaseHandBack(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		s, ctx := newStore(), context.Background()
		claim := func() int {
			t.Helper()
			n, _, err := s.Claim(ctx, "batch_h", 3, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if a, b := claim(), claim(); a != 0 || b != 1 {
			t.Fatalf("claimed %d then %d, want 0 then 1", a, b)
		}
		if err := s.Renew(ctx, "batch_h", 0, -time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // a store's clock in milliseconds: past the lapse
		if n := claim(); n != 0 {
			t.Errorf("after the hand-back claimed %d, want 0 again", n)
		}
		if n := claim(); n != 2 {
			t.Errorf("then claimed %d, want 2", n)
		}
	})
}

// awaitCompleted polls batch id until n of its lines or more are completed.
func awaitCompleted(t *testing.T, h llm.ObjectHost, id string, n int) {
	t.Helper()
	for {
		var c batchObj
		mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches/" + id}, &c)
		if c.RequestCounts.Completed >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Two runners on one store (two replicas) answer each line once; one whose lines hang
// (a replica killed) loses its parts when their lease lapses, and the other runs them.
func TestBatchTwoRunners(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(50))
		runner(t, newStore(), up, time.Minute)
		runner(t, newStore(), up, time.Minute)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 50)
		for i := range 50 {
			if n := up.callsOf(fmt.Sprintf("line %d", i)); n != 1 {
				t.Errorf("line %d: called %d times, want once", i, n)
			}
		}

		dead := newUpstream()
		dead.hold = make(chan struct{}) // never released: its runner's lines hang
		b = start(t, h, lines(30))
		runner(t, cutOff{newStore()}, dead, 150*time.Millisecond)
		time.Sleep(50 * time.Millisecond) // let it claim parts
		runner(t, newStore(), newUpstream(), 150*time.Millisecond)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 30)
	})
}

// cutOff is the store as a replica cut off from it sees it: it can no longer renew a lease.
type cutOff struct{ batch.Store }

func (cutOff) Renew(context.Context, string, int, time.Duration) error {
	return errors.New("the store is out of reach")
}

// A line that runs longer than the lease (a slow model) keeps its part: the runner renews
// the lease while the line runs, so no other runner (nor another worker of its own) takes
// the part over and runs the line again.
func TestBatchSlowLine(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		up.slow = "line 1"
		b := start(t, h, lines(12))
		runner(t, newStore(), up, slowFor/3)
		runner(t, newStore(), up, slowFor/3)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 12)
		for i := range 12 {
			if n := up.callsOf(fmt.Sprintf("line %d", i)); n != 1 {
				t.Errorf("line %d: called %d times, want once", i, n)
			}
		}
	})
}

// lost is the store of a replica that dies after each line's charge, before its result
// is written: no result of its is kept.
type lost struct{ batch.Store }

func (lost) Answer(context.Context, string, int, []byte, batch.Tally) (bool, error) {
	return false, errors.New("the replica died")
}

// A line whose result was lost after it ran (its replica killed between the charge and
// the result) runs again on another replica as the same account record (usage.WithRecord:
// the batch's id and the line's), which the account adds once; every line has its own.
func TestBatchLineRecord(t *testing.T) {
	eachStore(t, func(t *testing.T, newStore func() batch.Store) {
		h := &batch.Host{Store: newStore(), Alias: "sim"}
		up := newUpstream()
		b := start(t, h, lines(20))
		dead := runner(t, lost{newStore()}, up, 100*time.Millisecond)
		for up.callsOf("line 0")+up.callsOf("line 8")+up.callsOf("line 16") == 0 {
			time.Sleep(time.Millisecond)
		}
		dead.Close()
		runner(t, newStore(), up, 100*time.Millisecond)
		checkAnswered(t, h, await(t, h, b.ID, "completed"), 20)
		twice, ids := 0, map[string]bool{}
		up.mu.Lock()
		defer up.mu.Unlock()
		for i := range 20 {
			recs := up.records[fmt.Sprintf("line %d", i)]
			if len(recs) > 1 {
				twice++
			}
			for _, r := range recs {
				if r != recs[0] || !strings.HasPrefix(r, "batch:"+b.ID+":") || !strings.HasSuffix(r, fmt.Sprintf(":%d", i)) {
					t.Errorf("line %d: records %q, want one record, of its batch and line", i, recs)
					break
				}
			}
			if len(recs) > 0 && ids[recs[0]] {
				t.Errorf("line %d: record %q is another line's too", i, recs[0])
			}
			ids[recs[0]] = true
		}
		if twice == 0 {
			t.Error("no line ran twice: the dead runner's results were not lost")
		}
	})
}

// A runner stopped mid-line survives its handler's abort: the server answers a request
// whose client left (here the runner's own, cancelled) with panic(http.ErrAbortHandler),
// which net/http recovers, and the runner must too (a gateway closed during a batch).
func TestBatchCloseMidLine(t *testing.T) {
	s, err := batch.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := &batch.Host{Store: s, Alias: "sim"}
	started := make(chan struct{}, 16)
	abort := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
		panic(http.ErrAbortHandler)
	})
	b := start(t, h, lines(4))
	r := runner(t, s, abort, time.Minute)
	<-started
	r.Close()
	var c batchObj
	mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches/" + b.ID}, &c)
	if c.RequestCounts.Completed != 0 {
		t.Errorf("a line aborted by the runner's stop was answered: %+v", c.RequestCounts)
	}
}
