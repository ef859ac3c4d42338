package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// sentinelConfig is the replicas' configuration on a master under Sentinel; %s are the
// sentinels' addresses and redis.on_failure. The upstream is fleet.sh's mock. The Redis
// timeout is 1s, as clusterConfig's: on this 2-core machine a call beside everything else
// waited past the default 250ms now and then, an outage that is the machine's.
const sentinelConfig = `listen: "${SLUICE_LISTEN}"
auth: {admin_token: "${SLUICE_ADMIN_TOKEN}"}
redis: {sentinel: {master: %s, addrs: [%s]}, on_failure: %s, timeout: 1s}
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  default: [mock/echo]
`

// TestFleetSentinel: two fleets of two replicas behind nginx, one with on_failure open and
// one with closed, on one master, its replica and three sentinels. Each fleet runs about 100
// requests a second with a key of its own while the master changes: an operator's SENTINEL
// FAILOVER, then, with new keys, the new master killed with SIGKILL. With open no request
// fails; with closed the failures are 503 redis_unavailable, and requests are served again
// without a restart. After either move the account holds every request served, once: the
// writes the old master took after its replica was promoted, lost when Sentinel turns it
// into a replica, are written again on the new master (redisstore's confirm.go).
func TestFleetSentinel(t *testing.T) {
	if os.Getenv("SLUICE_FLEET_TEST") == "" {
		t.Skip("the fleet tests run with make test-fleet")
	}
	dir := t.TempDir()
	set, err := redistest.NewSentinelSet(filepath.Join(dir, "redis"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	start := func(policy string) *fleet {
		cfg := filepath.Join(dir, "sentinel-"+policy+".yaml")
		body := fmt.Sprintf(sentinelConfig, redistest.SentinelMaster, strings.Join(set.Addrs, ", "), policy)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return startFleet(t, 2, "FLEET_CONFIG="+cfg)
	}
	open, closed := start("open"), start("closed")
	for _, step := range []struct {
		name string
		move func() error
	}{
		{"SENTINEL FAILOVER", set.Failover},
		{"master killed", func() error { set.Master.Kill(); return set.WaitPromoted() }},
	} {
		t.Run(step.name, func(t *testing.T) {
			openID, openKey := open.keyID(t, `{"name":"sentinel-open"}`)
			closedID, closedKey := closed.keyID(t, `{"name":"sentinel-closed"}`)
			lo := startLoadEvery(t, open, openKey, 10*time.Millisecond, func(r reply) {
				t.Errorf("on_failure open: got %d %s, want every request served", r.status, r.body)
			})
			lc := startLoadEvery(t, closed, closedKey, 10*time.Millisecond, func(r reply) {
				if !refused(r) {
					t.Errorf("on_failure closed: got %d %s, want 200 or 503 redis_unavailable", r.status, r.body)
				}
			})
			lo.until(100)
			began, before := time.Now(), lo.sent.Load()
			err := step.move()
			moved := time.Since(began).Round(time.Millisecond)
			lo.until(lo.sent.Load() + 100)
			lo.stop()
			lc.stop()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the new master named after %v (%d requests per fleet meanwhile); open: %d requests, %d served, failed %v; closed: %d requests, %d served, failed %v",
				moved, lo.sent.Load()-before, lo.sent.Load(), lo.served.Load(), lo.failed, lc.sent.Load(), lc.served.Load(), lc.failed)
			if lo.served.Load() != lo.sent.Load() {
				t.Errorf("on_failure open: got %d of %d requests served (failed: %v), want every one", lo.served.Load(), lo.sent.Load(), lo.failed)
			}
			servedAgain(t, closed, closedKey, lc)
			open.countedOnce(t, openID, lo.served.Load())
			closed.countedOnce(t, closedID, lc.served.Load())
		})
	}
}
