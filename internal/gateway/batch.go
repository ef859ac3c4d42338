package gateway

import (
	"context"
	"log/slog"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/server"
)

// emulated is the gateway's own host of files and batches for the aliases with batch:
// emulate (issue 48): one host per alias over one store, and the runner of their lines.
type emulated struct {
	hosts  map[string]*batch.Host
	runner *batch.Runner
	store  *batch.Memory
}

// emulatedFromConfig builds the hosts and runner of c's emulated aliases; nil when none.
// The store is this process's (memory, chunks on disk): a fleet's Redis store is not
// wired yet, so with several replicas each runs the batches it holds.
func emulatedFromConfig(c *config.Config, g *server.Gate, log *slog.Logger) (*emulated, error) {
	rates := map[string]int{}
	for name, a := range c.Models {
		if a.Batch == "emulate" {
			rates[name] = a.BatchRate
		}
	}
	if len(rates) == 0 {
		return nil, nil
	}
	m, err := batch.NewMemory("")
	if err != nil {
		return nil, err
	}
	e := &emulated{hosts: map[string]*batch.Host{}, store: m,
		runner: &batch.Runner{Store: m, Limiter: g.Limiter, Log: log, Rate: func(alias string) int { return rates[alias] }}}
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
	return e.store.Close()
}
