package logstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// testBatches holds the batches' store to batch.Store's contract where it is the SQL's own
// (the host's and runner's tests in internal/batch run on both stores too): claims,
// finishes and answers raced on many connections count once, and what expires is gone,
// then swept by Retain.
func testBatches(t *testing.T, open openFunc) {
	ctx := context.Background()
	st := open(t, 0)
	b := st.(BatchHost).Batches(time.Hour)

	// Eight workers claim a 40-part batch at once: each part once, none left.
	const parts, workers = 40, 8
	var mu sync.Mutex
	var claimed []int
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				p, _, err := b.Claim(ctx, "batch_race", parts, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if p < 0 {
					return
				}
				mu.Lock()
				claimed = append(claimed, p)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(claimed)
	want := make([]int, parts)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(claimed, want) {
		t.Fatalf("claimed %v, want each of the %d parts once", claimed, parts)
	}
	if n, err := b.Leased(ctx, "batch_race"); err != nil || n != parts {
		t.Errorf("Leased: %d, %v; want %d", n, err, parts)
	}
	// They finish at once: the last one counts every part, a part finished twice once.
	seen := make([]int, parts+1)
	for p := range parts {
		wg.Go(func() {
			n, err := b.Finish(ctx, "batch_race", p)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[n]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if seen[parts] != 1 {
		t.Errorf("finishes' counts %v: want one that counts all %d parts", seen, parts)
	}
	if n, err := b.Finish(ctx, "batch_race", 0); err != nil || n != parts {
		t.Errorf("finishing a part again: %d, %v; want %d", n, err, parts)
	}
	if p, done, err := b.Claim(ctx, "batch_race", parts, time.Hour); p != -1 || done != parts || err != nil {
		t.Errorf("Claim when all are done: %d, %d, %v", p, done, err)
	}

	// A lapsed lease is claimed again, before any part never claimed; Renew keeps a lease.
	if p, _, _ := b.Claim(ctx, "batch_lease", 3, 300*time.Millisecond); p != 0 {
		t.Fatalf("first claim: part %d", p)
	}
	if p, _, _ := b.Claim(ctx, "batch_lease", 3, time.Hour); p != 1 {
		t.Fatalf("second claim: part %d", p)
	}
	time.Sleep(400 * time.Millisecond)
	if err := b.Renew(ctx, "batch_lease", 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := b.Claim(ctx, "batch_lease", 3, time.Hour); p != 0 {
		t.Errorf("after part 0's lease lapsed: claimed %d, want 0", p)
	}
	if n, _ := b.Leased(ctx, "batch_lease"); n != 2 {
		t.Errorf("Leased: %d, want 2", n)
	}

	// Eight replicas answer one line at once: one result kept, its tally added once.
	kept := 0
	for i := range workers {
		wg.Go(func() {
			ok, err := b.Answer(ctx, "batch_race", 7, fmt.Appendf(nil, "result %d", i), BatchTally{Completed: 1, InputTokens: 3, OutputTokens: 5})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				kept++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if _, err := b.Answer(ctx, "batch_race", 9, nil, BatchTally{Failed: 1}); err != nil {
		t.Fatal(err)
	}
	tally, err := b.Tally(ctx, "batch_race")
	if kept != 1 || err != nil || tally != (BatchTally{Completed: 1, Failed: 1, InputTokens: 3, OutputTokens: 5}) {
		t.Errorf("kept %d, tally %+v (%v): want one answer of line 7, and line 9's failure", kept, tally, err)
	}
	res, err := b.Answers(ctx, "batch_race", 6, 10)
	if err != nil || len(res) != 4 || res[0] != nil || res[1] == nil || res[2] != nil || res[3] == nil || len(res[3]) != 0 {
		t.Errorf("Answers 6 to 10: %q, %v; want line 7's, and line 9's empty one", res, err)
	}

	// Swap is compare-and-swap; what expires is gone at once, and Retain deletes it.
	if err := b.Put(ctx, "batch_a", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Swap(ctx, "batch_a", []byte("v0"), []byte("v2")); ok {
		t.Error("Swap from a value no longer held succeeded")
	}
	if ok, _ := b.Swap(ctx, "batch_a", []byte("v1"), []byte("v2")); !ok {
		t.Error("Swap from the value held failed")
	}
	short := st.(BatchHost).Batches(time.Millisecond)
	_ = short.Put(ctx, "file-old", []byte("x"))
	_ = short.PutChunk(ctx, "file-old", 0, []byte("chunk"))
	_ = short.Index(ctx, "files", "file-old", 1)
	time.Sleep(20 * time.Millisecond)
	if v, err := b.Get(ctx, "file-old"); v != nil || err != nil {
		t.Errorf("an expired record: %q, %v", v, err)
	}
	if ids, _ := b.Indexed(ctx, "files"); len(ids) != 0 {
		t.Errorf("an expired index: %v", ids)
	}
	if err := st.Retain(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	db := dbOf(st)
	for table, col := range map[string]string{"sluice_batch_objects": "id", "sluice_batch_chunks": "file", "sluice_batch_index": "id"} {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE "+col+" = 'file-old'").Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows expired after Retain (%v), want 0", table, n, err)
		}
	}
	if v, _ := b.Get(ctx, "batch_a"); string(v) != "v2" {
		t.Errorf("Retain took a record still kept: %q", v)
	}

	// The objects' owners (dialect.Store): an Add over an expired record keeps its value, a
	// second one does not.
	if ok, err := b.Add(ctx, "objects:x", []byte("alice"), time.Millisecond); !ok || err != nil {
		t.Fatalf("Add: %v, %v", ok, err)
	}
	time.Sleep(20 * time.Millisecond)
	if ok, err := b.Add(ctx, "objects:x", []byte("bob"), time.Hour); !ok || err != nil {
		t.Errorf("Add over an expired record: %v, %v", ok, err)
	}
	if ok, _ := b.Add(ctx, "objects:x", []byte("carol"), time.Hour); ok {
		t.Error("a second Add replaced the first")
	}
	if v, _ := b.Get(ctx, "objects:x"); string(v) != "bob" {
		t.Errorf("Get: %q, want bob", v)
	}
	if ok, _ := b.Delete(ctx, "objects:x"); !ok {
		t.Error("Delete of a kept record: false")
	}
	if ok, _ := b.Delete(ctx, "objects:x"); ok {
		t.Error("Delete of a deleted record: true")
	}
}
