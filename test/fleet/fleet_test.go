// The tests talk to nginx, and to single replicas where a scenario needs one. They run with
// make test-fleet (SLUICE_FLEET_TEST=1), which .ci/run calls after make test.
package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// fleet is a running deploy/fleet.sh.
type fleet struct {
	dir   string
	url   string   // nginx
	nodes []string // the replicas, by number
}

const admin = "fleet-admin"

// startFleet runs deploy/fleet.sh with n replicas; env adds to its environment
// (FLEET_CONFIG=... for the cluster form).
func startFleet(t *testing.T, n int, env ...string) *fleet {
	t.Helper()
	if os.Getenv("SLUICE_FLEET_TEST") == "" {
		t.Skip("the fleet tests run with make test-fleet")
	}
	for _, bin := range []string{redistest.ServerBin(), "nginx", "curl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed; .ci/run installs it", bin)
		}
	}
	base := freePorts(t, n+2)
	dir := t.TempDir()
	cmd := exec.Command("bash", "../../deploy/fleet.sh", "start", strconv.Itoa(n))
	cmd.Env = append(os.Environ(), "FLEET_DIR="+dir, "FLEET_PORT="+strconv.Itoa(base), "SLUICE_ADMIN_TOKEN="+admin)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	f := &fleet{dir: dir, url: fmt.Sprintf("http://127.0.0.1:%d", base)}
	t.Cleanup(func() {
		stop := exec.Command("bash", "../../deploy/fleet.sh", "stop")
		stop.Env = append(os.Environ(), "FLEET_DIR="+dir)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("fleet.sh stop: %v\n%s", err, out)
		}
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("== %s\n%s", l, tail(b, 3000))
				t.Logf("== %s, its warnings and errors:\n%s", l, warnings(b, 20))
			}
		}
	})
	if err != nil {
		t.Fatalf("fleet.sh start: %v\n%s", err, out)
	}
	for i := 1; i <= n; i++ {
		f.nodes = append(f.nodes, fmt.Sprintf("http://127.0.0.1:%d", base+i))
	}
	return f
}

// freePorts finds n consecutive free loopback ports below the ephemeral range (Linux's
// starts at 32768): a port from that range may be taken, before fleet.sh binds it, as the
// local end of a connection a replica opens (to the cluster's six nodes, say).
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		base := 20000 + rand.IntN(12000)
		ok := true
		for p := base; ok && p < base+n; p++ {
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
				ok = false
			} else {
				l.Close()
			}
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// warnings are the first n lines of a replica's log at level WARN or ERROR but the request
// lines (the tail of a busy replica's log is request lines), and how many requests failed.
func warnings(b []byte, n int) string {
	var out []string
	failed := 0
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !strings.Contains(l, `"level":"WARN"`) && !strings.Contains(l, `"level":"ERROR"`):
		case strings.Contains(l, `"msg":"request"`):
			failed++
		case len(out) < n:
			out = append(out, l)
		}
	}
	return fmt.Sprintf("%s\n(and %d requests that failed)", strings.Join(out, "\n"), failed)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// key creates a virtual key through nginx and returns it.
func (f *fleet) key(t *testing.T, body string) string {
	t.Helper()
	_, secret := f.keyID(t, body)
	return secret
}

// keyID creates a virtual key through nginx and returns its id and secret.
func (f *fleet) keyID(t *testing.T, body string) (id, secret string) {
	t.Helper()
	r := do(t, "POST", f.url+"/admin/keys", admin, body)
	var k struct{ ID, Key string }
	if r.status != 201 || json.Unmarshal(r.body, &k) != nil || k.Key == "" {
		t.Fatalf("POST /admin/keys: %d %s", r.status, r.body)
	}
	return k.ID, k.Key
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// refused reports whether r is the answer of a replica whose Redis is out under on_failure
// closed: 503 with the error code redis_unavailable.
func refused(r reply) bool {
	var e struct{ Error struct{ Code string } }
	return r.status == 503 && json.Unmarshal(r.body, &e) == nil && e.Error.Code == "redis_unavailable"
}

func do(t *testing.T, method, url, key, body string) reply {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func chat(model string, stream bool) string {
	return fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"hello fleet"}]}`, model, stream)
}

// TestFleet runs the scenarios on one fleet, the one that stops replicas last.
func TestFleet(t *testing.T) {
	f := startFleet(t, 3)
	t.Run("limit holds across replicas", func(t *testing.T) { limitAcrossReplicas(t, f) })
	t.Run("cooldown seen by every replica", func(t *testing.T) { cooldownShared(t, f) })
	t.Run("run resumed on another replica", func(t *testing.T) { resumeOnAnotherReplica(t, f) })
	t.Run("replica killed mid-run", func(t *testing.T) { killedReplica(t, f) })
	t.Run("SIGTERM lets streams finish", func(t *testing.T) { drainOnSIGTERM(t, f) })
}

// limitAcrossReplicas: a key limited to 60 requests gets exactly 60 successes out of 100
// concurrent requests spread over the replicas by nginx. The limit is per sliding minute and
// the requests take well under a second, so no refill can blur the count.
func limitAcrossReplicas(t *testing.T, f *fleet) {
	key := f.key(t, `{"name":"sixty","rpm":60}`)
	var mu sync.Mutex
	codes := map[int]int{}
	replicas := map[string]int{}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			r := do(t, "POST", f.url+"/v1/chat/completions", key, chat("default", false))
			mu.Lock()
			codes[r.status]++
			replicas[r.header.Get("X-Sluice-Replica")]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] != 60 || codes[429] != 40 {
		t.Errorf("got %v, want exactly 60 x 200 and 40 x 429", codes)
	}
	if len(replicas) < 2 {
		t.Errorf("served by replicas %v, want nginx to spread them", replicas)
	}
}

// cooldownShared: three failures of a target through replica 1 put it into cooldown; replicas
// 2 and 3 then skip it (one attempt, served by the second target).
func cooldownShared(t *testing.T, f *fleet) {
	key := f.key(t, `{"name":"cool"}`)
	for range 3 {
		r := do(t, "POST", f.nodes[0]+"/v1/chat/completions", key, chat("flaky", false))
		if r.status != 200 || r.header.Get("X-Sluice-Attempts") != "2" {
			t.Fatalf("replica 1: %d attempts %q, want 200 after 2 attempts", r.status, r.header.Get("X-Sluice-Attempts"))
		}
	}
	for _, node := range f.nodes[1:] {
		r := do(t, "POST", node+"/v1/chat/completions", key, chat("flaky", false))
		if r.status != 200 || r.header.Get("X-Sluice-Attempts") != "1" || r.header.Get("X-Sluice-Target") != "mock/echo" {
			t.Errorf("%s: %d attempts %q target %q, want the failing target skipped", node, r.status,
				r.header.Get("X-Sluice-Attempts"), r.header.Get("X-Sluice-Target"))
		}
	}
}

// drainOnSIGTERM: streams in flight through nginx complete when every replica gets SIGTERM;
// a replica fails /readyz as soon as it got the signal.
func drainOnSIGTERM(t *testing.T, f *fleet) {
	key := f.key(t, `{"name":"drain"}`)
	const n = 6
	type result struct {
		done  bool
		bytes int
		err   error
	}
	results := make(chan result, n)
	started := make(chan struct{}, n)
	for range n {
		go func() {
			req, _ := http.NewRequest("POST", f.url+"/v1/chat/completions", strings.NewReader(chat("slow", true)))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				started <- struct{}{}
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			var r result
			first := true
			for sc.Scan() {
				if first {
					first = false
					started <- struct{}{}
				}
				r.bytes += len(sc.Bytes())
				r.done = r.done || sc.Text() == "data: [DONE]"
			}
			if first {
				started <- struct{}{}
			}
			r.err = sc.Err()
			results <- r
		}()
	}
	for range n {
		<-started
	}
	pids, _ := filepath.Glob(filepath.Join(f.dir, "pids", "gateway-*.pid"))
	for _, p := range pids {
		b, _ := os.ReadFile(p)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.After(30 * time.Second)
	for range n {
		select {
		case r := <-results:
			if !r.done || r.err != nil {
				t.Errorf("a stream in flight did not complete: done %v after %d bytes, err %v", r.done, r.bytes, r.err)
			}
		case <-deadline:
			t.Fatal("streams did not end within 30 s")
		}
	}
}
