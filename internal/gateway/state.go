package gateway

import (
	"time"

	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/redisstore"
)

// defaultStateTTL is how long a response asked of a direct "provider/model" target (no
// alias, so no alias ttl) is kept: an alias's default, as OpenAI keeps them.
const defaultStateTTL = 30 * 24 * time.Hour

// stateFromConfig is where the gateway keeps the Responses API's stored responses (README
// "Responses"): in Redis when configured, so any replica resumes a conversation; else in
// this process, within responses.memory_bytes, least recently used first out. Each is kept
// for its alias's ttl.
func stateFromConfig(c *config.Config, rs *redisstore.Store) dialect.State {
	ttl := map[string]time.Duration{}
	for name, a := range c.Models {
		ttl[name] = a.TTL.Std()
	}
	st := dialect.State{TTL: func(alias string) time.Duration {
		if d, ok := ttl[alias]; ok {
			return d
		}
		return defaultStateTTL
	}}
	if rs != nil {
		st.Store = rs.Responses()
	} else {
		st.Store = &cache.Memory{MaxBytes: int(c.Responses.MemoryBytes)}
	}
	return st
}

var (
	_ dialect.Store = (*redisstore.Responses)(nil)
	_ dialect.Store = (*cache.Memory)(nil)
)
