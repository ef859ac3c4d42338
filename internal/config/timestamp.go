package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Timestamp is an instant written in RFC 3339 ("2026-12-31T23:59:59Z") or as a date
// ("2026-12-31", midnight UTC). The zero value means none.
type Timestamp struct{ time.Time }

func (ts *Timestamp) decodeNode(dec *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		dec.typeError(n, path, "a timestamp")
		return
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, n.Value); err == nil {
			ts.Time = t
			return
		}
	}
	// The value is shown: a timestamp is never a secret.
	dec.errorf(n.Line, "%s: invalid timestamp %q (want RFC 3339, 2026-12-31T23:59:59Z, or a date, 2026-12-31)", path, n.Value)
}
