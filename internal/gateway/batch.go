package gateway

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/server"
)

// retention is how long Redis or the log's database keeps emulated files and batches:
// OpenAI keeps batch outputs 30 days.
const retention = 30 * 24 * time.Hour

// emulated is the gateway's own host of files and batches for the aliases with batch:
// emulate (issue 48): one host per alias over one store, and the runner of their lines.
type emulated struct {
	hosts  map[string]*batch.Host
	runner *batch.Runner
	store  io.Closer // the memory store's chunks; nil with Redis or the log's database
}

// emulatedFromConfig builds the hosts and runner of c's emulated aliases; nil when none.
// The store is Redis when configured (every replica runs every batch, and a restart
// resumes), else the request log's database when logs.url is set (a restart resumes; on
// PostgreSQL, every replica runs every batch), else this process's (memory, chunks on disk).
func emulatedFromConfig(c *config.Config, g *server.Gate, rs *redisstore.Store, rl *requestLog, log *slog.Logger) (*emulated, error) {
	rates := map[string]int{}
	for name, a := range c.Models {
		if a.Batch == "emulate" {
			rates[name] = a.BatchRate
		}
	}
	if len(rates) == 0 {
		return nil, nil
	}
	var m batch.Store
	e := &emulated{hosts: map[string]*batch.Host{}}
	if rs != nil {
		m = rs.Batches(retention)
	} else if h, ok := logBatchHost(rl); ok {
		m = batch.SQL{Batches: h.Batches(retention)}
	} else {
		mem, err := batch.NewMemory("")
		if err != nil {
			return nil, err
		}
		m, e.store = mem, mem
	}
	e.runner = &batch.Runner{Store: m, Limiter: g.Limiter, Log: log, Rate: func(alias string) int { return rates[alias] }}
	if g.Keys != nil {
		e.runner.Key = func(ctx context.Context, id string) (*auth.Key, error) { return g.Keys.Get(ctx, id) }
	}
	for name := range rates {
		e.hosts[name] = &batch.Host{Store: m, Alias: name}
	}
	return e, nil
}

// Host is the emulated host of alias, the hook the files and batches wires look up.
func (e *emulated) Host(alias string) (llm.ObjectHost, bool) {
	if e == nil {
		return nil, false
	}
	h, ok := e.hosts[alias]
	return h, ok
}

// Close stops the runner, then removes the store's chunks.
func (e *emulated) Close() error {
	_ = e.runner.Close()
	if e.store == nil {
		return nil
	}
	return e.store.Close()
}

// logBatchHost is the request log's store when it keeps batches (both SQL stores do).
func logBatchHost(rl *requestLog) (logstore.BatchHost, bool) {
	if rl == nil {
		return nil, false
	}
	h, ok := rl.store.(logstore.BatchHost)
	return h, ok
}

// objectState is where the files and batches wires record their objects' owners: the
// wires' state st (Redis when configured), else the log's database when the log is on (a
// restart forgets no owner: a batch that resumes is still its key's), else st (memory).
func objectState(st dialect.State, rs *redisstore.Store, rl *requestLog) dialect.State {
	if h, ok := logBatchHost(rl); ok && rs == nil {
		st.Store = h.Batches(retention)
	}
	return st
}

var _ dialect.Store = (*logstore.Batches)(nil)
