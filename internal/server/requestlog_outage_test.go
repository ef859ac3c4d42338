package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// Two replicas write to one PostgreSQL, which stops for 3 s while they serve. Writes never
// touch the request path: every request made while the store is down (health says so) is
// served, its record waits in the writer's queue and spool, and once the store is back
// every request of the run has its record, exactly once (the store's unique ids), those made
// during the outage included. No time is asserted: what the outage costs a request is
// measured by the benchmarks.
func TestRequestLogReplicasPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	urls := [2]string{serveGate(t, logsConfigURL(pg.URL), nil, time.Minute, nil), serveGate(t, logsConfigURL(pg.URL), nil, time.Minute, nil)}
	var secrets [2]string
	for i, url := range urls {
		_, secrets[i] = createKey(t, url, logsAdmin, `{"name":"k"}`) // each replica's own: no Redis here
	}
	var (
		mu     sync.Mutex
		served = map[string]int{} // request id: times served (a duplicated id would be 2)
		failed int
	)
	// load sends requests from 4 clients per replica, each until it has sent n or, with
	// n < 0, until stop is closed; it returns how many each replica served.
	load := func(n int, stop <-chan struct{}) [2]int {
		var counts [2]int
		var wg sync.WaitGroup
		for i, url := range urls {
			for range 4 {
				wg.Go(func() {
					for sent := 0; n < 0 || sent < n; sent++ {
						select {
						case <-stop:
							return
						default:
						}
						r := do(t, "POST", url+"/v1/chat/completions", secrets[i], chatBody("default", false, ""))
						mu.Lock()
						if id := r.header.Get("X-Request-Id"); r.status == http.StatusOK && id != "" {
							served[id]++
							counts[i]++
						} else {
							failed++
						}
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		return counts
	}

	load(25, nil)
	pg.Stop(t)
	for i, url := range urls {
		if r := do(t, "GET", url+"/admin/health", logsAdmin, ""); !bytes.Contains(r.body, []byte(`"logs":"unreachable"`)) {
			t.Fatalf("replica %d's health with PostgreSQL stopped: %d %s, want the log unreachable", i, r.status, r.body)
		}
	}
	stop := make(chan struct{})
	timer := time.AfterFunc(3*time.Second, func() { close(stop) })
	defer timer.Stop()
	during := load(-1, stop)
	pg.Start(t)
	load(25, nil)

	mu.Lock()
	defer mu.Unlock()
	if failed > 0 {
		t.Fatalf("%d requests failed around the log's store outage", failed)
	}
	if during[0] == 0 || during[1] == 0 {
		t.Fatalf("served %v requests while the store was down, want some on each replica: the test proved nothing", during)
	}
	t.Logf("%d requests, %v while the store was down", len(served), during)
	ids := map[string]int{}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := do(t, "GET", urls[1]+"/admin/logs/export?format=jsonl", logsAdmin, "")
		clear(ids)
		for _, line := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
			var rec logRecord
			if json.Unmarshal(line, &rec) == nil && rec.ID != "" {
				ids[rec.ID]++
			}
		}
		if len(ids) >= len(served) || time.Now().After(deadline) {
			break
		}
	}
	missing, twice := 0, 0
	for id, n := range served {
		if ids[id] == 0 {
			missing++
		}
		if n > 1 || ids[id] > 1 {
			twice++
		}
	}
	if len(ids) != len(served) || missing > 0 || twice > 0 {
		t.Errorf("got %d records for %d requests (%v while the store was down): %d missing, %d more than once; want each once",
			len(ids), len(served), during, missing, twice)
	}
}
