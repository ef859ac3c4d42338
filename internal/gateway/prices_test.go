package gateway

import (
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/usage"
)

// The prices: block's cache rates default as documented: a read and a 5-minute write to the
// input price, a 1-hour write to the 5-minute write's (issue 46).
func TestPricesFromConfig(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	c := &config.Config{Prices: map[string]config.Price{
		"a/all":   {Input: 3, Output: 15, CachedInput: f(0.3), CacheWrite: f(3.75), CacheWrite1h: f(6)},
		"a/5m":    {Input: 3, Output: 15, CacheWrite: f(3.75)},
		"a/plain": {Input: 2, Output: 8},
	}}
	tests := []struct {
		name string
		want usage.Price
	}{
		{"a/all", usage.Price{Input: 3, Output: 15, CachedInput: 0.3, CacheWrite: 3.75, CacheWrite1h: 6}},
		{"a/5m", usage.Price{Input: 3, Output: 15, CachedInput: 3, CacheWrite: 3.75, CacheWrite1h: 3.75}},
		{"a/plain", usage.Price{Input: 2, Output: 8, CachedInput: 2, CacheWrite: 2, CacheWrite1h: 2}},
	}
	prices := usageFromConfig(c, nil).Prices
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := prices.Lookup(tt.name, "m"); !ok || got != tt.want {
				t.Errorf("got %+v %v, want %+v", got, ok, tt.want)
			}
		})
	}
}
