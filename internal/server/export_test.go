package server

import "time"

// SetLimitWindow sets the span of the rpm and tpm limits, before s serves: tests count over
// an hour, so that nothing leaves the window while they count.
func SetLimitWindow(s *Server, d time.Duration) { s.o.Gate.Window = d }
