package telemetry

import (
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// maxLabels is the most labels a cached label set has; the metrics use at most five.
const maxLabels = 5

// maxLabelSets bounds the cache. The label values are bounded already (label, provider,
// the error kinds), so this is only a backstop: a set beyond it is built every time.
const maxLabelSets = 4096

// labelSets caches the measurement option of each label set the request metrics record
// with: building it (attribute.NewSet copies, sorts and hashes) cost more than the
// measurement itself, several times per request. Safe for concurrent use.
type labelSets struct {
	mu sync.RWMutex
	m  map[[maxLabels]attribute.KeyValue]metric.MeasurementOption
}

// opt returns the option recording with the labels kvs (in any order, as NewSet takes them).
func (c *labelSets) opt(kvs ...attribute.KeyValue) metric.MeasurementOption {
	if len(kvs) > maxLabels {
		return metric.WithAttributeSet(attribute.NewSet(slices.Clone(kvs)...))
	}
	var k [maxLabels]attribute.KeyValue
	copy(k[:], kvs)
	c.mu.RLock()
	o, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	o = metric.WithAttributeSet(attribute.NewSet(slices.Clone(kvs)...))
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[maxLabels]attribute.KeyValue]metric.MeasurementOption{}
	}
	if len(c.m) < maxLabelSets {
		c.m[k] = o
	}
	c.mu.Unlock()
	return o
}
