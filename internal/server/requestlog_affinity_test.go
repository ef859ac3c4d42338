package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRequestLogAffinity (issue 46), end to end on the sim provider's prompt cache:
//   - a conversation (named by the Chat user field) on a group of two equal targets stays
//     on its first target, and the record says affinity new, then kept; that target's
//     simulated cache then reports reads;
//   - an alias with prompt_cache: auto marks a Chat client's request that has none, so its
//     first turn writes the cache and its second reads it, in the record and in the Chat
//     usage the client gets (prompt_tokens_details.cached_tokens).
func TestRequestLogAffinity(t *testing.T) {
	url := serveGate(t, logsYAML("sqlite://"+t.TempDir()+"/logs.db", `  sim2: {kind: sim}
`, `  pair: {targets: [{group: [sim/echo, sim2/echo]}]}
  auto: {targets: [sim/echo], prompt_cache: auto}
`), nil, time.Minute, nil)
	_, secret := createKey(t, url, logsAdmin, `{"name":"agent"}`)
	system := strings.Repeat("You are a careful agent; answer in one line. ", 120) // ~1,350 tokens
	turn := func(model, user string, n int) (string, cacheRecord, int) {
		system := system
		if model == "auto" { // a prompt of its own: the sim's cache is per target, which pair may share
			system = strings.ToUpper(system)
		}
		t.Helper()
		msgs := []map[string]string{{"role": "system", "content": system}}
		for i := 1; i <= n; i++ {
			msgs = append(msgs, map[string]string{"role": "user", "content": "question " + string(rune('0'+i))})
			if i < n {
				msgs = append(msgs, map[string]string{"role": "assistant", "content": "answer"})
			}
		}
		b, _ := json.Marshal(map[string]any{"model": model, "user": user, "messages": msgs})
		r := do(t, "POST", url+"/v1/chat/completions", secret, string(b))
		if r.status != http.StatusOK {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		var body struct {
			Usage struct {
				Details struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		json.Unmarshal(r.body, &body)
		id := r.header.Get("X-Request-Id")
		waitRecord(t, url, id)
		var rec cacheRecord
		if err := json.Unmarshal(do(t, "GET", url+"/admin/logs/"+id, logsAdmin, "").body, &rec); err != nil {
			t.Fatal(err)
		}
		return r.header.Get("X-Sluice-Target"), rec, body.Usage.Details.Cached
	}

	first, rec, _ := turn("pair", "conv-7", 1)
	if rec.Affinity == nil || *rec.Affinity != "new" {
		t.Errorf("turn 1: affinity %v, want new", rec.Affinity)
	}
	for n := 2; n <= 4; n++ {
		target, rec, cached := turn("pair", "conv-7", n)
		if target != first || rec.Affinity == nil || *rec.Affinity != "kept" {
			t.Errorf("turn %d: served by %s with affinity %v, want %s, kept", n, target, rec.Affinity, first)
		}
		if rec.CacheReadTokens == 0 || cached != rec.CacheReadTokens {
			t.Errorf("turn %d: %d cache reads in the record, %d in the client's usage; want the same, more than 0", n, rec.CacheReadTokens, cached)
		}
	}

	_, rec, _ = turn("auto", "conv-8", 1)
	if rec.CacheWriteTokens == 0 || rec.CacheReadTokens != 0 {
		t.Errorf("auto, turn 1: %d written, %d read; want a write and no read", rec.CacheWriteTokens, rec.CacheReadTokens)
	}
	_, rec, cached := turn("auto", "conv-8", 2)
	if rec.CacheReadTokens == 0 || cached != rec.CacheReadTokens || rec.SavedUSD <= 0 && rec.CostUSD > 0 {
		t.Errorf("auto, turn 2: %d read (client saw %d), saved %v; want reads", rec.CacheReadTokens, cached, rec.SavedUSD)
	}
}
