package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// A stored response is one hash-tagged key with its ttl, read by every replica; the first
// kept under an id stays; a deleted or unknown one is nil; with Redis down, an Unavailable
// error.
func TestResponses(t *testing.T) {
	srv := redistest.Start(t)
	a, b := replica(t, srv, false, nil).Responses(), replica(t, srv, false, nil).Responses()
	ctx := context.Background()
	if ok, err := a.Add(ctx, "resp_1", []byte(`{"n":1}`), time.Hour); !ok || err != nil {
		t.Fatalf("Add: got %v, %v; want true, nil", ok, err)
	}
	if ok, err := b.Add(ctx, "resp_1", []byte(`{"n":2}`), time.Hour); ok || err != nil {
		t.Errorf("Add of a kept id: got %v, %v; want false, nil", ok, err)
	}
	if got, err := b.Get(ctx, "resp_1"); string(got) != `{"n":1}` || err != nil {
		t.Errorf("Get on the other replica: got %s, %v; want the first value", got, err)
	}
	ttl, err := srv.Do("PTTL", "sluice:{resp:resp_1}")
	if ms, _ := strconv.Atoi(strings.TrimPrefix(ttl, ":")); err != nil || ms <= 0 || ms > int(time.Hour/time.Millisecond) {
		t.Errorf("PTTL of sluice:{resp:resp_1}: got %q, %v; want at most an hour", ttl, err)
	}
	if got, err := a.Get(ctx, "resp_none"); got != nil || err != nil {
		t.Errorf("Get of an unknown id: got %s, %v; want nil, nil", got, err)
	}
	if ok, err := b.Delete(ctx, "resp_1"); !ok || err != nil {
		t.Errorf("Delete: got %v, %v; want true, nil", ok, err)
	}
	if ok, err := a.Delete(ctx, "resp_1"); ok || err != nil {
		t.Errorf("Delete again: got %v, %v; want false, nil", ok, err)
	}
	if got, _ := a.Get(ctx, "resp_1"); got != nil {
		t.Errorf("Get after Delete: got %s, want nil", got)
	}
	srv.Stop(t)
	if _, err := a.Get(ctx, "resp_1"); llm.KindOf(err) != llm.Unavailable {
		t.Errorf("Get with Redis down: got %v, want an Unavailable error", err)
	}
}
