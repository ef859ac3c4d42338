package telemetry

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// logBuffer is the most a LogWriter holds before it writes.
const logBuffer = 64 << 10

// NewLogger is the gateway's logger on f: JSON lines, for a log collector to parse, or text
// when f is a terminal, for a person to read. format ("json" or "text", e.g. from
// SLUICE_LOG_FORMAT) overrides the choice; "" keeps it. Unless f is a terminal, the lines
// are held up to flush (NewLoggerTo).
func NewLogger(f *os.File, format string, flush time.Duration) (log *slog.Logger, done func()) {
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		flush = 0 // a person reads it as it comes
		if format == "" {
			format = "text"
		}
	}
	return NewLoggerTo(f, format, flush)
}

// NewLoggerTo is the gateway's logger on w in format ("text", else JSON; NewHandler). With
// flush above 0 the lines go through a LogWriter that holds them up to flush: done writes
// what it holds, and must run before the process ends.
func NewLoggerTo(w io.Writer, format string, flush time.Duration) (log *slog.Logger, done func()) {
	done = func() {}
	if flush > 0 {
		lw := NewLogWriter(w, flush)
		w, done = lw, lw.Close
	}
	return slog.New(NewHandler(w, format)), done
}

// LogFlushEnv is SLUICE_LOG_FLUSH's duration from getenv: how long a log line may wait to be
// written together with the next ones. Unset, or not a duration, it is 0: each line is
// written at once, and a process killed at any moment has written every line before it (the
// fleet tests count a killed replica's access lines). A busy gateway may trade that for one
// write a flush instead of one a line.
func LogFlushEnv(getenv func(string) string) (time.Duration, error) {
	v := getenv("SLUICE_LOG_FLUSH")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("SLUICE_LOG_FLUSH=%q is not a duration of 0 or more (such as 100ms): each line is written at once", v)
	}
	return d, nil
}

// LogWriter holds the lines written to it and writes them to its writer together: every
// flush, when 64 KiB wait, and at Close. A log line is one write(2) a request (the access
// line), some 2% of a plain request's CPU in a profile (issue 51); held, a busy gateway
// makes ten a second. A line waits at most flush, and what a crash finds held is lost.
// Safe for concurrent use; a line is one Write, as slog's handlers make it, and never
// split between writers.
type LogWriter struct {
	mu     sync.Mutex
	out    io.Writer
	w      *bufio.Writer
	closed bool // Close ran: lines go to out at once
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// NewLogWriter starts a LogWriter to w that writes what it holds every flush. Close it.
func NewLogWriter(w io.Writer, flush time.Duration) *LogWriter {
	l := &LogWriter{out: w, w: bufio.NewWriterSize(w, logBuffer), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run(flush)
	return l
}

func (l *LogWriter) run(flush time.Duration) {
	defer close(l.done)
	t := time.NewTicker(flush)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.Flush()
		case <-l.stop:
			return
		}
	}
}

// Write holds p, a line, writing what was held first when p does not fit.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.out.Write(p)
	}
	if len(p) > l.w.Available() && l.w.Buffered() > 0 {
		if err := l.w.Flush(); err != nil {
			return 0, err
		}
	}
	return l.w.Write(p)
}

// Flush writes what is held.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// Close stops the LogWriter's goroutine and writes what it holds; later lines are written
// at once. A second call does nothing.
func (l *LogWriter) Close() {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		l.w.Flush()
		l.closed = true
	})
}
