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
	m  map[[maxLabels]attribute.KeyValue]labelOpts
}

// labelOpts are the options of one label set, as an Add's and a Record's variadic slice: a
// cached slice passed on with "..." is not copied, where the call's own would be allocated
// each time (it escapes through the instrument's interface).
type labelOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newLabelOpts(kvs []attribute.KeyValue) labelOpts {
	o := metric.WithAttributeSet(attribute.NewSet(slices.Clone(kvs)...))
	return labelOpts{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

// opt returns the options recording with the labels kvs (in any order, as NewSet takes
// them).
func (c *labelSets) opt(kvs ...attribute.KeyValue) labelOpts {
	if len(kvs) > maxLabels {
		return newLabelOpts(kvs)
	}
	var k [maxLabels]attribute.KeyValue
	copy(k[:], kvs)
	c.mu.RLock()
	o, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	o = newLabelOpts(kvs)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[maxLabels]attribute.KeyValue]labelOpts{}
	}
	if len(c.m) < maxLabelSets {
		c.m[k] = o
	}
	c.mu.Unlock()
	return o
}
