package telemetry

import (
	"context"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Observer is one server's telemetry (DESIGN §7): its spans and metrics, and the statistics
// of /admin/stats, shared with the other replicas through the store when there is one
// (Fleet). Safe for concurrent use.
type Observer struct {
	*Telemetry
	window time.Duration
	fleet  *Fleet // nil: this replica alone
}

// NewObserver is the telemetry of o; shared is the server's shared state, whose statistics
// store (a StatsStore) shares the statistics with the fleet; nil or another: none.
func NewObserver(o Options, shared any) *Observer {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	ob := &Observer{Telemetry: New(o), window: o.Window}
	if st, ok := shared.(StatsStore); ok {
		ob.fleet = NewFleet(st, ob.Telemetry, o.Window)
	}
	return ob
}

// Served notes a model call: the fleet's next publish is armed.
func (ob *Observer) Served() {
	if ob.fleet != nil {
		ob.fleet.Touch()
	}
}

// Report is the statistics of the last minutes (a whole number from 1 to the window; ""
// the whole window), every replica's with a fleet (Partial when the store could not be
// read). Another minutes is an Invalid error naming the parameter.
func (ob *Observer) Report(ctx context.Context, minutes string) (Report, error) {
	window := int(ob.window / time.Minute)
	n := window
	if minutes != "" {
		var err error
		if n, err = strconv.Atoi(minutes); err != nil || n < 1 || n > window {
			return Report{}, &llm.Error{Kind: llm.Invalid, Param: "minutes", Type: "invalid_request_error",
				Message: "minutes must be a whole number from 1 to " + strconv.Itoa(window) + " (telemetry.stats_window)."}
		}
	}
	if ob.fleet != nil {
		return ob.fleet.Report(ctx, n), nil
	}
	return Merge(time.Now(), n, []Snapshot{ob.Stats().Snapshot("local")}), nil
}

// Close stops publishing to the fleet and waits for a publish in flight: the store may
// close next.
func (ob *Observer) Close() {
	if ob.fleet != nil {
		ob.fleet.Close()
	}
}

// Publish publishes this replica's statistics to the fleet now, as its timer would (none
// without a fleet).
func (ob *Observer) Publish() {
	if ob.fleet != nil {
		ob.fleet.Publish()
	}
}
