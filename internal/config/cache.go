package config

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Cache is an alias's response cache (issue 24, docs/caching.md): absent, the alias caches
// nothing.
type Cache struct {
	TTL Duration `yaml:"ttl"`
	// MaxEntryBytes bounds one stored answer: a larger one is served, not stored.
	MaxEntryBytes Bytes `yaml:"max_entry_bytes"`
	// Scope is who shares an entry: key (default), team (the key's metadata field team),
	// global.
	Scope string `yaml:"scope"`
	// Nondeterministic caches requests with a temperature above 0 and no seed too.
	Nondeterministic bool `yaml:"nondeterministic"`
	// ClientBypass honours the client's Cache-Control: no-cache and no-store.
	ClientBypass bool `yaml:"client_bypass"`
}

// CacheStore is the response cache's store, for every alias that caches (top-level
// cache:).
type CacheStore struct {
	// MemoryBytes bounds the in-memory LRU (no Redis): least recently used answers go first.
	MemoryBytes Bytes `yaml:"memory_bytes"`
	// Lease is how long a leader holds an identical request's key across replicas without
	// renewing it (Redis): a replica that dies mid-answer holds its followers that long.
	Lease Duration `yaml:"lease"`
}

// ResponsesStore is where the gateway keeps the responses asked with store: true (top-level
// responses:; docs/responses.md): in Redis when redis: is set, each for its alias's ttl;
// else in this process, within MemoryBytes (default 64MiB), least recently used first out.
type ResponsesStore struct {
	MemoryBytes Bytes `yaml:"memory_bytes"`
}

func (c *Cache) setDefaults() {
	*c = Cache{TTL: seconds(600), MaxEntryBytes: 1 << 20, Scope: "key"}
}

func (v *validator) cacheStore(c CacheStore) {
	v.positive("cache.memory_bytes", int64(c.MemoryBytes))
	v.positive("cache.lease", int64(c.Lease))
}

func (v *validator) responsesStore(c ResponsesStore) {
	v.positive("responses.memory_bytes", int64(c.MemoryBytes))
}

func (v *validator) cache(path string, c *Cache) {
	if c == nil {
		return
	}
	v.positive(path+".ttl", int64(c.TTL))
	v.positive(path+".max_entry_bytes", int64(c.MaxEntryBytes))
	if !oneOf(c.Scope, "key", "team", "global") {
		v.errorf(path+".scope", "want key, team or global, got %q", c.Scope)
	}
}

// Bytes is a size written as a whole number of bytes or with a unit: 512KiB, 1MiB, 1GiB
// (KB, MB, GB are taken as the same powers of two).
type Bytes int64

var byteUnits = []struct {
	suffix string
	n      int64
}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"b", 1}}

// parseBytes reads "1MiB" or "1048576".
func parseBytes(s string) (Bytes, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	mul := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mul = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mul {
		return 0, false
	}
	return Bytes(n * mul), true
}

func (b *Bytes) decodeNode(dec *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		dec.typeError(n, path, "a size")
		return
	}
	x, ok := parseBytes(n.Value)
	if !ok {
		dec.errorf(n.Line, "%s: invalid size %q (want bytes, or a number with a unit: 512KiB, 1MiB)", path, n.Value)
		return
	}
	*b = x
}

// MarshalText writes b as a number of bytes, so a Config can be dumped.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(strconv.FormatInt(int64(b), 10)), nil }
