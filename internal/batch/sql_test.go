package batch_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// Every test of the host and the runner runs on the request log's SQL stores too: an
// SQLite file, and a real PostgreSQL (skipped without its programs), each replica with its
// own connection to the one database.
func init() {
	stores["sqlite"] = func(t *testing.T) func() batch.Store {
		url := "sqlite://" + filepath.Join(t.TempDir(), "logs.db")
		return func() batch.Store { return openSQL(t, url) }
	}
	stores["postgres"] = func(t *testing.T) func() batch.Store {
		url := pgtest.Start(t).URL
		return func() batch.Store { return openSQL(t, url) }
	}
}

// openSQL opens the log store of url, closed at cleanup, and returns its batches' store.
func openSQL(t *testing.T, url string) batch.Store {
	t.Helper()
	st, err := logstore.Open(context.Background(), logstore.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return batch.SQL{Batches: st.(logstore.BatchHost).Batches(time.Hour)}
}

// A batch on SQLite outlives its replica: the runner and the store close midway (the
// process ends), the file is opened again by a new process, and its runner finishes the
// batch, each line answered once, the tally exact.
func TestBatchResumesAfterRestart(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "logs.db")
	ctx := context.Background()
	st, err := logstore.Open(ctx, logstore.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	s := batch.SQL{Batches: st.(logstore.BatchHost).Batches(time.Hour)}
	h := &batch.Host{Store: s, Alias: "sim"}
	up := newUpstream()
	b := start(t, h, lines(60))
	r := runner(t, s, up, 200*time.Millisecond) // the parts it holds at its end are taken over when their lease lapses
	awaitCompleted(t, h, b.ID, 10)
	r.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := openSQL(t, url)
	h = &batch.Host{Store: s2, Alias: "sim"}
	var c batchObj
	mustCall(t, h, as(alice), llm.ObjectCall{Method: "GET", Path: "batches/" + b.ID}, &c)
	if c.Status != "in_progress" || c.RequestCounts.Completed < 10 {
		t.Fatalf("after the restart: got %+v, want in progress with the lines answered before it", c)
	}
	runner(t, s2, up, 200*time.Millisecond)
	checkAnswered(t, h, await(t, h, b.ID, "completed"), 60)
}
