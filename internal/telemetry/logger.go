package telemetry

import (
	"log/slog"
	"os"
)

// NewLogger is the gateway's logger on f: JSON lines, for a log collector to parse, or text
// when f is a terminal, for a person to read. format ("json" or "text", e.g. from
// SLUICE_LOG_FORMAT) overrides the choice; "" keeps it.
func NewLogger(f *os.File, format string) *slog.Logger {
	if format == "" {
		format = "json"
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(f, nil))
	}
	return slog.New(slog.NewJSONHandler(f, nil))
}
