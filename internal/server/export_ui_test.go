package server

import (
	"time"

	"github.com/sluice-gw/sluice/internal/runs"
)

// SetRuns remakes a new server's runs manager, on the same store, with a shorter lease, a
// faster flush, a smaller window and lag (0: unchanged), before it serves any run.
func SetRuns(s *Server, lease, flush time.Duration, window, maxLag int) {
	o := s.o.UI.RunOptions
	o.Lease, o.Window, o.MaxLag = lease, window, maxLag
	if flush > 0 {
		o.FlushInterval = flush
	}
	s.o.UI.Runs = runs.NewManager(o)
}

// CrashRuns stops the server's runs as if its process died: nothing more is written and
// their leases lapse.
func CrashRuns(s *Server) { s.o.UI.Runs.Crash() }
