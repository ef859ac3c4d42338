package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
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
	// n < 0, until stop is closed; it returns how many each replica served, and how long
	// each request took (logged, never asserted).
	load := func(n int, stop <-chan struct{}) ([2]int, []time.Duration) {
		var counts [2]int
		var took []time.Duration
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
						began := time.Now()
						r := do(t, "POST", url+"/v1/chat/completions", secrets[i], chatBody("default", false, ""))
						mu.Lock()
						took = append(took, time.Since(began))
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
		return counts, took
	}
	// lasting is a load of d.
	lasting := func(d time.Duration) ([2]int, []time.Duration) {
		stop := make(chan struct{})
		timer := time.AfterFunc(d, func() { close(stop) })
		defer timer.Stop()
		return load(-1, stop)
	}

	_, before := lasting(time.Second)
	pg.Stop(t)
	for i, url := range urls {
		if r := do(t, "GET", url+"/admin/health", logsAdmin, ""); !bytes.Contains(r.body, []byte(`"logs":"unreachable"`)) {
			t.Fatalf("replica %d's health with PostgreSQL stopped: %d %s, want the log unreachable", i, r.status, r.body)
		}
	}
	during, tookDown := lasting(3 * time.Second)
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
	t.Logf("%d requests, %v while the store was down; latency p50/p99 with the store up %v/%v, down %v/%v",
		len(served), during, quantile(before, 0.5), quantile(before, 0.99), quantile(tookDown, 0.5), quantile(tookDown, 0.99))
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

// quantile is the q-quantile of ds (0 for none), rounded to 0.1 ms; it sorts ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(q*float64(len(ds)-1))].Round(100 * time.Microsecond)
}
