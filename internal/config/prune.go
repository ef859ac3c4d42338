package config

import (
	"fmt"
	"slices"
)

// prune leaves out of every chain the providers that cannot be used, so the embedded default
// runs without keys (DESIGN §9), and records why. Warnings name providers, aliases and keys
// of the file, never a value.
func (c *Config) prune() {
	gone := map[string]bool{}
	for _, name := range sortedKeys(c.Providers) {
		p := c.Providers[name]
		// An openai-compatible server often needs no key (a local model), or carries it in
		// a header: the kinds say (Kind.NeedsKey, Kind.Lacks).
		k, _ := kindOf(p.Kind)
		if lacks := k.unusable(p); lacks != "" {
			gone[name] = true
			delete(c.Providers, name)
			c.warnf("provider %q (kind %s) has %s: left out of every chain", name, p.Kind, lacks)
			continue
		}
		for _, h := range sortedKeys(p.Headers) {
			if p.Headers[h] == "" {
				c.warnf("provider %q: header %q is empty", name, h)
			}
		}
	}
	for _, name := range sortedKeys(c.Models) {
		a := c.Models[name]
		if a.Targets = pruneChain(a.Targets, gone); len(a.Targets) == 0 {
			delete(c.Models, name)
			c.warnf("model alias %q has no usable target: left out", name)
			continue
		}
		c.Models[name] = a
	}
	for _, sec := range c.Plain() {
		for _, name := range sortedKeys(sec.Aliases) {
			e := sec.Aliases[name]
			if e.Targets = pruneChain(e.Targets, gone); len(e.Targets) == 0 {
				delete(sec.Aliases, name)
				c.warnf("%s alias %q has no usable target: left out", sec.Name, name)
				continue
			}
			sec.Aliases[name] = e
		}
	}
	if c.Auth.Disabled && c.AuthEnabled() {
		c.warnf("auth.disabled is ignored: keys or auth.admin_token are configured")
	}
}

// pruneChain drops the targets of gone providers, and the elements left empty.
func pruneChain(es []Element, gone map[string]bool) []Element {
	out := es[:0]
	for _, e := range es {
		var ts []string
		var ws []int
		for i, t := range e.Targets {
			if prov, _, _ := SplitTarget(t); !gone[prov] {
				ts, ws = append(ts, t), append(ws, e.Weights[i])
			}
		}
		if len(ts) > 0 {
			e.Targets, e.Weights = ts, ws
			out = append(out, e)
		}
	}
	return slices.Clip(out)
}

func (c *Config) warnf(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}
