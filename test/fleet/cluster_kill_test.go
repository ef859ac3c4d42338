package fleet

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mcpPost sends one MCP message on session sid (none: "") and returns the reply and the
// session it names.
func mcpPost(t *testing.T, url, key, sid, body string) (reply, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}, resp.Header.Get("Mcp-Session-Id")
}

// mcpAcrossReplicas: a session started on replica 1 serves a tool call on replica 2, and a
// cancellation sent to replica 2 reaches the call running on replica 1 (the cancel channel
// is sharded pub/sub on a cluster).
func mcpAcrossReplicas(t *testing.T, f *clusterFleet) {
	key := f.key(t, `{"name":"mcp","mcp":{"servers":["*"]}}`)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fleet","version":"1"}}}`
	r, sid := mcpPost(t, f.nodes[0], key, "", initialize)
	if r.status != 200 || sid == "" {
		t.Fatalf("initialize on replica 1: %d %s", r.status, r.body)
	}
	r, _ = mcpPost(t, f.nodes[1], key, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"docs__fetch","arguments":{"u":"x"}}}`)
	if r.status != 200 || !strings.Contains(string(r.body), `hits for {\"u\":\"x\"}`) || r.header.Get("X-Sluice-Replica") != "gateway-2" {
		t.Fatalf("a call on replica 2: %d from %q %s, want the tool's result", r.status, r.header.Get("X-Sluice-Replica"), r.body)
	}

	req, _ := http.NewRequest(http.MethodPost, f.nodes[0]+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"docs__slow","arguments":{},"_meta":{"progressToken":1}}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	} // the tool runs on replica 1
	if r, _ := mcpPost(t, f.nodes[1], key, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`); r.status != http.StatusAccepted {
		t.Fatalf("cancel on replica 2: got %d, want 202", r.status)
	}
	for sc.Scan() { // replica 1 ends the call without a response
		if strings.Contains(sc.Text(), `"id":9`) {
			t.Errorf("got %q, want no response to a cancelled call", sc.Text())
		}
	}
	if got := f.docs.Cancelled(); len(got) != 1 {
		t.Errorf("got the server told %v, want one cancellation", got)
	}
}

// masterKilled: about 200 requests a second through nginx while the master holding today's
// account is killed with SIGKILL. With on_failure open no request fails; with closed the
// failed ones are 503 redis_unavailable, and requests are served again after the failover
// without a restart. Once the cluster has failed over (a replica promoted), the account holds
// every request served, exactly. The killed master comes back as a replica at the end.
func masterKilled(t *testing.T, f *clusterFleet, open bool) {
	id, key := f.keyID(t, `{"name":"load"}`)
	victim, err := f.redis.MasterOf("sluice:{usage:" + time.Now().UTC().Format("2006-01-02") + "}")
	if err != nil {
		t.Fatal(err)
	}
	var sent, served atomic.Int64
	var mu sync.Mutex
	failed := map[int]int{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond) // 200 a second, each on its own
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sent.Add(1)
				wg.Go(func() {
					r := do(t, "POST", f.url+"/v1/chat/completions", key, chat("default", false))
					if r.status == 200 {
						served.Add(1)
						return
					}
					if open || r.status != 503 || !strings.Contains(string(r.body), "redis_unavailable") {
						t.Errorf("got %d %s", r.status, r.body)
					}
					mu.Lock()
					failed[r.status]++
					mu.Unlock()
				})
			}
		}
	}()
	until := func(n int64) { // bounded: the load goes on whatever Redis does
		for deadline := time.Now().Add(30 * time.Second); sent.Load() < n && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	until(400)
	victim.Kill()
	killedAt := sent.Load()
	err = f.redis.WaitOK(30 * time.Second)
	failedOver := sent.Load()
	until(failedOver + 400)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("on_failure %s: %d requests, the master killed after %d, the cluster ok again after %d; %d served, failed %v",
		map[bool]string{true: "open", false: "closed"}[open], sent.Load(), killedAt, failedOver, served.Load(), failed)
	if open && served.Load() != sent.Load() {
		t.Errorf("got %d of %d requests served (failed: %v), want every one (on_failure open)", served.Load(), sent.Load(), failed)
	}
	if !open { // served again: within the breaker's probe, then every request
		ok := 0
		for deadline := time.Now().Add(10 * time.Second); ok < 20 && time.Now().Before(deadline); {
			if r := do(t, "POST", f.url+"/v1/chat/completions", key, chat("default", false)); r.status == 200 {
				ok, _ = ok+1, served.Add(1)
			} else if ok > 0 {
				t.Fatalf("after the failover, once served again: got %d %s", r.status, r.body)
			}
		}
		if ok < 20 {
			t.Fatalf("not served again after the failover (%d served)", ok)
		}
	}
	u := f.usage(t, id, func(u usageTotal) bool { return u.Requests-u.Errors == served.Load() })
	t.Logf("usage: %+v", u)
	if err := victim.Restart(); err != nil { // back as a replica, for a master to fail over to
		t.Fatal(err)
	}
	if err := f.redis.WaitOK(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
