package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/batch"
)

// batchLines is the size of TestFleetEmulatedBatch's batch.
const batchLines = 500

// A 500-line emulated batch (the alias batch-mock of deploy/fleet.yaml, 100 lines a second
// across the fleet) on 3 replicas sharing Redis. The file is uploaded and the batch created
// through replica 1, which is killed (SIGKILL) once 150 lines are answered, while its parts
// are leased; once 300 are, replicas 2 and 3 are killed too, and all three restarted: the
// progress is in Redis, so the batch goes on from where it was (never fewer lines answered
// than before the restart), and the parts the killed replicas held run again once their
// leases lapse (batch.DefaultLease, 30 s). Then: request_counts completed 500; the output
// file holds 500 lines, one per custom_id; the key's usage in the account (GET
// /admin/usage) is exactly the sum of the output lines' usage and 500 requests on the
// target (no line charged twice, none lost: a line run again after its replica died
// between its charge and its result is the same account record), as is the batch's own
// usage; and the replicas' access logs hold a request of the alias per line, and one per
// line run again (the fleet runs without a request log store: deploy/fleet.yaml has no
// logs.url).
func TestFleetEmulatedBatch(t *testing.T) {
	f := startFleet(t, 3)
	start := time.Now()
	keyID, key := f.keyID(t, `{"name":"batch","models":["*"]}`)
	var in strings.Builder
	for i := range batchLines {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"batch-mock","messages":[{"role":"user","content":"line %d of the batch"}]}}`+"\n", i, i)
	}
	file := uploadBatchFile(t, f.nodes[0], key, in.String())
	r := do(t, "POST", f.nodes[0]+"/v1/batches", key, `{"input_file_id":"`+file+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	var b batchState
	if r.status != 200 || json.Unmarshal(r.body, &b) != nil || b.ID == "" {
		t.Fatalf("POST /v1/batches: %d %s", r.status, r.body)
	}

	// Replica 1 dies with parts leased; replicas 2 and 3 go on.
	b = awaitBatch(t, f.nodes[1], key, b.ID, func(b batchState) bool { return b.RequestCounts.Completed >= 150 })
	victims := []*replica{f.replica(t, 1)}
	victims[0].kill(t)
	killedAt := b.RequestCounts.Completed
	// Then the others: every replica down, lines in flight.
	b = awaitBatch(t, f.nodes[1], key, b.ID, func(b batchState) bool { return b.RequestCounts.Completed >= 300 })
	for _, i := range []int{2, 3} {
		v := f.replica(t, i)
		v.kill(t)
		victims = append(victims, v)
	}
	// The last poll may have been answered just before a line was: what the store holds
	// now is at least that.
	before := b.RequestCounts.Completed
	for _, v := range victims {
		v.restart(t, f)
	}
	after := do(t, "GET", f.nodes[2]+"/v1/batches/"+b.ID, key, "")
	var first batchState
	if after.status != 200 || json.Unmarshal(after.body, &first) != nil || first.RequestCounts.Completed < before ||
		first.Status != "in_progress" && first.Status != "finalizing" && first.Status != "completed" {
		t.Fatalf("the batch after the restart: %d %s; want it going on (or done) with at least the %d lines answered before it", after.status, after.body, before)
	}
	b = awaitBatch(t, f.nodes[2], key, b.ID, func(b batchState) bool { return b.Status != "in_progress" && b.Status != "finalizing" })
	took := time.Since(start)
	if b.Status != "completed" || b.RequestCounts.Total != batchLines || b.RequestCounts.Completed != batchLines || b.RequestCounts.Failed != 0 {
		t.Fatalf("batch: got %+v, want %d lines completed", b, batchLines)
	}

	// The output file: every custom_id once, and the sum of the lines' usage.
	r = do(t, "GET", f.url+"/v1/files/"+b.OutputFileID+"/content", key, "")
	if r.status != 200 {
		t.Fatalf("the output file: %d %s", r.status, r.body)
	}
	seen := map[string]int{}
	var in1, out1, n int64
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			CustomID string `json:"custom_id"`
			Response struct {
				StatusCode int `json:"status_code"`
				Body       struct {
					Usage struct {
						PromptTokens     int64 `json:"prompt_tokens"`
						CompletionTokens int64 `json:"completion_tokens"`
					} `json:"usage"`
				} `json:"body"`
			} `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Response.StatusCode != 200 {
			t.Errorf("an output line: %v %s", err, sc.Bytes())
			continue
		}
		n++
		seen[l.CustomID]++
		in1 += l.Response.Body.Usage.PromptTokens
		out1 += l.Response.Body.Usage.CompletionTokens
	}
	if n != batchLines || len(seen) != batchLines {
		t.Errorf("the output file: %d lines, %d custom_ids; want %d of each", n, len(seen), batchLines)
	}
	for i := range batchLines {
		if c := seen[fmt.Sprintf("r%d", i)]; c != 1 {
			t.Errorf("line r%d: answered %d times, want once", i, c)
		}
	}
	if in1 == 0 || out1 == 0 {
		t.Fatalf("the output lines carry no usage: %d in, %d out", in1, out1)
	}
	if b.Usage.InputTokens != in1 || b.Usage.OutputTokens != out1 {
		t.Errorf("the batch's usage: %+v, want the lines' sum, %d in and %d out", b.Usage, in1, out1)
	}

	// The account: the key's tokens are exactly the lines' (its other requests, the upload,
	// the create and the polls, carry none), and the target served 500 requests.
	from := time.Now().UTC().Add(-24 * time.Hour).Format(time.DateOnly)
	r = do(t, "GET", f.url+"/admin/usage?group_by=target&from="+from+"&key="+keyID, admin, "")
	var u struct {
		Key  string
		Data []struct {
			Target string
			usageSums
		}
		Total usageSums
	}
	if r.status != 200 || json.Unmarshal(r.body, &u) != nil || u.Key != keyID {
		t.Fatalf("GET /admin/usage: %d %s", r.status, r.body)
	}
	if u.Total.InputTokens != in1 || u.Total.OutputTokens != out1 || u.Total.Errors != 0 {
		t.Errorf("the key's usage: %+v, want the lines' sum, %d in and %d out, no error", u.Total, in1, out1)
	}
	var lines usageSums
	for _, d := range u.Data {
		if d.Target == "mock/echo" {
			lines = d.usageSums
		}
	}
	if lines.Requests != batchLines || lines.InputTokens != in1 || lines.OutputTokens != out1 {
		t.Errorf("the key's usage on mock/echo: %+v, want %d requests, %d in, %d out", lines, batchLines, in1, out1)
	}

	// The access logs: a request of the alias per line, and one more for each line a killed
	// replica had run, and charged, but not written the result of (it ran again elsewhere,
	// as the same account record: charged once, above); at most one per worker of each
	// replica killed. A line a killed replica had in flight reached neither its log line
	// nor the account.
	logged := 0
	logs, _ := filepath.Glob(filepath.Join(f.dir, "logs", "gateway-*.log"))
	for _, l := range logs {
		raw, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, `"msg":"request"`) && strings.Contains(line, `"path":"/v1/chat/completions"`) &&
				strings.Contains(line, `"model":"batch-mock"`) && strings.Contains(line, `"status":200`) {
				logged++
			}
		}
	}
	if again := logged - batchLines; again < 0 || again > len(victims)*batch.DefaultWorkers {
		t.Errorf("the access logs: %d requests of batch-mock, want %d and at most %d run again", logged, batchLines, len(victims)*batch.DefaultWorkers)
	}
	t.Logf("%d lines in %v (replica 1 killed at %d lines answered, all three at %d, restarted; %d run again); usage %d in + %d out tokens, %d requests",
		batchLines, took.Round(time.Second), killedAt, before, logged-batchLines, in1, out1, lines.Requests)
}

// batchState is what the test reads of a batch.
type batchState struct {
	ID            string                                 `json:"id"`
	Status        string                                 `json:"status"`
	OutputFileID  string                                 `json:"output_file_id"`
	RequestCounts struct{ Total, Completed, Failed int } `json:"request_counts"`
	Usage         struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// usageSums is what the test reads of the account's sums (UsageSums in api/openapi.yaml).
type usageSums struct {
	Requests     int64 `json:"requests"`
	Errors       int64 `json:"errors"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// uploadBatchFile uploads content as a batch input file through node, and returns its id.
func uploadBatchFile(t *testing.T, node, key, content string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("purpose", "batch")
	_ = mw.WriteField("model", "batch-mock")
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", node+"/v1/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var file struct{ ID string }
	if resp.StatusCode != 200 || json.Unmarshal(raw, &file) != nil || file.ID == "" {
		t.Fatalf("POST /v1/files: %d %s", resp.StatusCode, raw)
	}
	return file.ID
}

// awaitBatch polls batch id through node until done holds, for at most three minutes.
func awaitBatch(t *testing.T, node, key, id string, done func(batchState) bool) batchState {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var b batchState
	for time.Now().Before(deadline) {
		r := do(t, "GET", node+"/v1/batches/"+id, key, "")
		if r.status == 200 && json.Unmarshal(r.body, &b) == nil && done(b) {
			return b
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("batch %s: %+v after 3 minutes", id, b)
	return b
}

// replica is a gateway of the fleet as deploy/fleet.sh started it: its pid, command line
// and environment (read from /proc), to kill it and start it again as it was.
type replica struct {
	n    int
	pid  int
	args []string
	env  []string
}

// replica reads gateway-n's pid file and process.
func (f *fleet) replica(t *testing.T, n int) *replica {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "pids", fmt.Sprintf("gateway-%d.pid", n)))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	args, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	env, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err1 != nil || err2 != nil {
		t.Fatalf("gateway-%d (pid %d): %v %v", n, pid, err1, err2)
	}
	split := func(b []byte) []string { return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") }
	return &replica{n: n, pid: pid, args: split(args), env: split(env)}
}

// kill kills the replica with SIGKILL and waits until it is gone.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(r.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(r.pid, 0) == nil {
		if s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.pid)); strings.Contains(string(s), ") Z ") {
			return // a zombie: dead, for fleet.sh's shell to reap
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// restart starts the replica again as it was, its output appended to its log, its pid in
// its pid file (fleet.sh stop ends it), and waits until it is ready.
func (r *replica) restart(t *testing.T, f *fleet) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(f.dir, "logs", fmt.Sprintf("gateway-%d.log", r.n)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(r.args[0], r.args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = r.env, log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // reaped when fleet.sh stop ends it
	pidFile := filepath.Join(f.dir, "pids", fmt.Sprintf("gateway-%d.pid", r.n))
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	node := f.nodes[r.n-1]
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(node + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	t.Fatalf("gateway-%d did not come back within 30 s", r.n)
}
