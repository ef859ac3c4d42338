package mcptest

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// Records is a slog handler that hands every record, its message ("msg"), level ("level")
// and attributes, to the channel, for a test to wait on what a client logs (a process that
// started, its stderr). A record nobody has room for is dropped: make it with a buffer.
type Records chan map[string]string

func (r Records) Enabled(context.Context, slog.Level) bool { return true }
func (r Records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r Records) WithGroup(string) slog.Handler            { return r }

func (r Records) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message, "level": rec.Level.String()}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	select {
	case r <- m:
	default:
	}
	return nil
}

// Next waits for the next record whose message is msg, and fails the test after a minute.
func (r Records) Next(t testing.TB, msg string) map[string]string {
	t.Helper()
	tm := time.NewTimer(time.Minute)
	defer tm.Stop()
	for {
		select {
		case m := <-r:
			if m["msg"] == msg {
				return m
			}
		case <-tm.C:
			t.Fatalf("no log %q within a minute", msg)
		}
	}
}
