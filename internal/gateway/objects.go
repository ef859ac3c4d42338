package gateway

import (
	"log/slog"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/objects"
	"github.com/sluice-gw/sluice/internal/server"
)

// objectsFromConfig is the files and batches service (docs/files-batches.md, issue 48):
// the hosts are the providers whose kind keeps objects (kinds' objects), the aliases'
// targets say which one keeps a model's, and the owners are recorded in the wires' state
// (state: Redis, or the log's database, or memory: objectState). emulated is the gateway's
// own hosts (an alias's batch: emulate, batch.go), consulted first.
func objectsFromConfig(c *config.Config, o *server.Options, state dialect.State, emulated func(string) (llm.ObjectHost, bool), log *slog.Logger) *objects.Service {
	dir := &objects.Directory{Hosts: map[string]llm.ObjectHost{}, Anthropic: map[string]bool{}, Emulated: emulated, Targets: func(alias string) ([]string, bool) {
		a, ok := c.Models[alias]
		var ts []string
		for _, e := range a.Targets {
			ts = append(ts, e.Targets...)
		}
		return ts, ok
	}}
	for name, p := range o.Providers {
		if h, ok := p.(llm.ObjectHost); ok && kinds[c.Providers[name].Kind].objects {
			dir.Hosts[name] = h
			dir.Anthropic[name] = c.Providers[name].Kind == "anthropic" // its Message Batches, not OpenAI's files
		}
	}
	f := c.Files
	return &objects.Service{Hosts: dir, State: state, TTL: f.TTL.Std(), Model: f.Model, AnthropicModel: f.AnthropicModel, Log: log,
		MaxUpload: func(model string) int64 {
			if n, ok := f.MaxUploads[model]; ok {
				return int64(n)
			}
			return int64(f.MaxUpload)
		}}
}
