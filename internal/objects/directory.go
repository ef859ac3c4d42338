package objects

import (
	"context"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// EmulatePrefix starts the name of a host the gateway runs for an alias (its batch:
// emulate), "emulate/<alias>".
const EmulatePrefix = "emulate/"

// Directory is the Hosts of a configuration, as the gateway builds it: the providers that
// keep objects, the aliases' targets, and the gateway's own hosts of emulated batches.
// Read-only once built.
type Directory struct {
	// Hosts are the providers that keep objects, by name.
	Hosts map[string]llm.ObjectHost
	// Targets are the targets ("provider/model") of an alias, in order; false: model is
	// not an alias.
	Targets func(alias string) ([]string, bool)
	// Emulated is the gateway's own host of alias's objects (an alias with batch: emulate),
	// consulted first; nil: none. Its name is EmulatePrefix + alias.
	Emulated func(alias string) (llm.ObjectHost, bool)
	// Anthropic are the hosts whose API is Anthropic's Message Batches; the others, and the
	// emulated ones, keep OpenAI's files and batches.
	Anthropic map[string]bool
}

var _ Hosts = (*Directory)(nil)

// For implements Hosts: the emulated host of an alias that has one (OpenAI's wire; its
// target the alias's first, which prices the estimate of a batch), else
// its first target whose provider keeps the objects of the wire, else the provider of a
// "provider/model" when it keeps them.
func (d *Directory) For(_ context.Context, model string, messages bool) (Place, error) {
	if d.Emulated != nil && !messages {
		if h, ok := d.Emulated(model); ok {
			p := Place{Name: EmulatePrefix + model, Host: h}
			if d.Targets != nil {
				if ts, ok := d.Targets(model); ok && len(ts) > 0 {
					p.Target = ts[0] // its lines run through its chain: the estimate of a batch's budget hold
				}
			}
			return p, nil
		}
	}
	keeps := func(pn string) llm.ObjectHost {
		if d.Anthropic[pn] != messages {
			return nil
		}
		return d.Hosts[pn]
	}
	what := "files and batches (providers of kind openai and azure do"
	if messages {
		what = "message batches (providers of kind anthropic do"
	}
	if d.Targets != nil {
		if ts, ok := d.Targets(model); ok {
			for _, t := range ts {
				pn, _, _ := strings.Cut(t, "/")
				if h := keeps(pn); h != nil {
					return Place{Name: pn, Host: h, Target: t}, nil
				}
			}
			return Place{}, notFound("No target of the model '" + model + "' keeps " + what + "; see docs/files-batches.md).")
		}
	}
	if pn, m, ok := strings.Cut(model, "/"); ok && m != "" {
		if h := keeps(pn); h != nil {
			return Place{Name: pn, Host: h, Target: model}, nil
		}
		return Place{}, notFound("The provider '" + pn + "' does not keep " + what + "; see docs/files-batches.md).")
	}
	return Place{}, &llm.Error{Kind: llm.NotFound, Status: 404, Param: "model", Code: "model_not_found", Type: "invalid_request_error",
		Message: "The model '" + model + "' does not exist or you do not have access to it."}
}

// Host implements Hosts.
func (d *Directory) Host(name string) llm.ObjectHost {
	if alias, ok := strings.CutPrefix(name, EmulatePrefix); ok {
		if d.Emulated == nil {
			return nil
		}
		h, _ := d.Emulated(alias)
		return h
	}
	return d.Hosts[name]
}
