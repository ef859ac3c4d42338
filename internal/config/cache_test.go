package config

import (
	"testing"
	"time"
)

func TestCacheConfig(t *testing.T) {
	c := mustParse(t, providers+"models:\n  d: {targets: [sim/echo], cache: {}}\n  e: {targets: [sim/echo], cache: {ttl: 1h, max_entry_bytes: 512KiB, scope: team, nondeterministic: true, client_bypass: true}}\n  f: [sim/echo]\n", env())
	d, e := c.Models["d"].Cache, c.Models["e"].Cache
	if d == nil || d.TTL.Std() != 10*time.Minute || d.MaxEntryBytes != 1<<20 || d.Scope != "key" || d.Nondeterministic || d.ClientBypass {
		t.Errorf("got defaults %+v, want ttl 10m, 1MiB, scope key, the rest off", d)
	}
	if e == nil || e.TTL.Std() != time.Hour || e.MaxEntryBytes != 512<<10 || e.Scope != "team" || !e.Nondeterministic || !e.ClientBypass {
		t.Errorf("got %+v, want what the file says", e)
	}
	if c.Models["f"].Cache != nil {
		t.Error("an alias without cache: got one, want caching off")
	}
	for _, tt := range []struct{ name, cache, want string }{
		{"scope", "{scope: team-a}", `models.d.cache.scope: want key, team or global, got "team-a"`},
		{"ttl", "{ttl: 0s}", "models.d.cache.ttl: must be positive"},
		{"size", "{max_entry_bytes: 1 megabyte}", `models.d.cache.max_entry_bytes: invalid size "1 megabyte"`},
		{"zero size", "{max_entry_bytes: 0}", "models.d.cache.max_entry_bytes: must be positive"},
		{"unknown key", "{ttl: 1m, lifetime: 1m}", "lifetime"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, providers+"models:\n  d: {targets: [sim/echo], cache: "+tt.cache+"}\n", tt.want)
		})
	}
}
