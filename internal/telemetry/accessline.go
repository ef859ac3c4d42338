package telemetry

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/jsonstr"
)

// AccessHandler is a slog.Handler that writes the access line itself, in the format of its
// lines, without slog's attributes: LogAccess's path on every request (slog's generic
// handling of the line's 28 attributes, and a masking handler's pass over them, were some
// 5% of the gateway's CPU per plain request, issue 51). mask, when not nil, masks each of
// the line's texts, as a masking handler above it would.
type AccessHandler interface {
	slog.Handler
	HandleAccess(ctx context.Context, level slog.Level, a *Access, mask func(string) string) error
}

// NewHandler is the handler of the gateway's log lines to w: JSON, or text when format is
// "text", as slog's own handlers write them (TestAccessLineAsSlog), the access line written
// by hand.
func NewHandler(w io.Writer, format string) slog.Handler {
	lw := &lockedWriter{w: w}
	if format == "text" {
		return lineHandler{slog.NewTextHandler(lw, nil), lw, false}
	}
	return lineHandler{slog.NewJSONHandler(lw, nil), lw, true}
}

// lockedWriter serializes the Writes of slog's handler and of the access line, as slog's
// handler serializes its own: a line is one Write, never two lines in one.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineHandler is slog's text or JSON handler, and an AccessHandler in the same format.
// Derived handlers (WithAttrs, WithGroup) are slog's own: their lines carry attributes the
// access line's own writing would leave out.
type lineHandler struct {
	slog.Handler
	w    io.Writer
	json bool
}

var _ AccessHandler = lineHandler{}

// HandleAccess writes a's line in one Write, through the writer slog's handler writes to.
func (h lineHandler) HandleAccess(ctx context.Context, level slog.Level, a *Access, mask func(string) string) error {
	bp := lineBufs.Get().(*[]byte)
	t := time.Now()
	line, ok := h.appendLine((*bp)[:0], ctx, t, level, a, mask)
	if cap(line) <= maxLineBuf { // a line of a huge path or model is let go
		*bp = line
		defer lineBufs.Put(bp)
	}
	if !ok { // a float or a time JSON has no literal for: slog writes its error in its place
		r := accessRecordAt(ctx, t, level, a)
		if mask != nil {
			return maskAll(ctx, h.Handler, r, mask)
		}
		return h.Handler.Handle(ctx, r)
	}
	_, err := h.w.Write(line)
	return err
}

// appendLine appends a's line at t to b; false when slog would write an error in it.
func (h lineHandler) appendLine(b []byte, ctx context.Context, t time.Time, level slog.Level, a *Access, mask func(string) string) ([]byte, bool) {
	e := lineEncoder{b: b, json: h.json, mask: mask}
	e.begin(t, level)
	accessFields(ctx, a, &e)
	e.end()
	return e.b, !e.bad
}

// lineBufs are HandleAccess's buffers: a line is some 600 bytes; one that grew past
// maxLineBuf is not kept.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxLineBuf = 64 << 10

// fieldSink receives the access line's fields in order (accessFields).
type fieldSink interface {
	str(key, v string)
	int(key string, v int)
	num(key string, v float64)
	bool(key string, v bool)
}

// accessFields is the access line's one list of fields, for the record slog handles and for
// the line written by hand alike: never a key, a prompt or a completion.
func accessFields(ctx context.Context, a *Access, s fieldSink) {
	s.str("id", a.ID)
	s.str("record", a.Record)
	s.str("method", a.Method)
	s.str("path", a.Path)
	s.int("status", a.Status)
	s.num("ms", ms(a.Duration))
	s.str("model", a.Model)
	s.str("target", a.Target)
	s.int("attempts", a.Attempts)
	s.bool("stream", a.Stream)
	s.str("kind", a.Kind.String())
	s.num("first_event_ms", ms(a.FirstEvent))
	s.num("ttft_ms", ms(a.FirstText))
	s.int("redactions", a.Redactions)
	s.str("key_id", a.KeyID)
	s.str("key_name", a.KeyName)
	s.int("tokens", a.tokens())
	s.int("tokens_in", a.tokensIn())
	s.int("tokens_out", a.tokensOut())
	u := a.usage()
	s.int("tokens_cache_read", u.Cached)
	s.int("tokens_cache_write", u.CacheWrite)
	s.num("cost_usd", a.CostUSD)
	s.num("overhead_ms", ms(a.Overhead))
	s.int("tools", a.Tools)
	s.int("tool_errors", a.ToolErrors)
	s.num("tool_ms", ms(a.ToolTime))
	s.str("cache", a.Cache)
	s.str("trace_id", traceID(ctx))
}

// attrSink collects the fields as slog attributes.
type attrSink struct{ as []slog.Attr }

func (s *attrSink) str(k, v string)         { s.as = append(s.as, slog.String(k, v)) }
func (s *attrSink) int(k string, v int)     { s.as = append(s.as, slog.Int(k, v)) }
func (s *attrSink) num(k string, v float64) { s.as = append(s.as, slog.Float64(k, v)) }
func (s *attrSink) bool(k string, v bool)   { s.as = append(s.as, slog.Bool(k, v)) }

// AccessRecord is a's line as a slog record, for a handler that is not an AccessHandler. A
// record of its own, with no caller: Logger.LogAttrs walks the stack for the caller's pc on
// every line, and the access line's caller is always LogAccess.
func AccessRecord(ctx context.Context, level slog.Level, a *Access) slog.Record {
	return accessRecordAt(ctx, time.Now(), level, a)
}

func accessRecordAt(ctx context.Context, t time.Time, level slog.Level, a *Access) slog.Record {
	r := slog.NewRecord(t, level, "request", 0)
	s := attrSink{as: make([]slog.Attr, 0, 28)}
	accessFields(ctx, a, &s)
	r.AddAttrs(s.as...)
	return r
}

// maskAll handles r through h with every string attribute masked (the access line's only
// texts): HandleAccess's way when it cannot write the line itself.
func maskAll(ctx context.Context, h slog.Handler, r slog.Record, mask func(string) string) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindString {
			a.Value = slog.StringValue(mask(a.Value.String()))
		}
		out.AddAttrs(a)
		return true
	})
	return h.Handle(ctx, out)
}

// lineEncoder writes a line as slog's text or JSON handler writes it: the time, the level,
// the message "request", then the fields.
type lineEncoder struct {
	b    []byte
	json bool
	bad  bool // a float that JSON cannot write
	mask func(string) string
}

func (e *lineEncoder) begin(t time.Time, level slog.Level) {
	t = t.Round(0) // as slog: no monotonic reading
	if e.json {
		if y := t.Year(); y < 0 || y >= 10000 {
			e.bad = true // slog writes an error for the time
		}
		e.b = append(e.b, `{"time":"`...)
		e.b = t.AppendFormat(e.b, time.RFC3339Nano)
		e.b = append(e.b, `","level":"`...)
		e.b = append(e.b, level.String()...)
		e.b = append(e.b, `","msg":"request"`...)
		return
	}
	e.b = append(e.b, "time="...)
	e.b = t.Truncate(time.Millisecond).AppendFormat(e.b, "2006-01-02T15:04:05.000Z07:00")
	e.b = append(e.b, " level="...)
	e.b = append(e.b, level.String()...)
	e.b = append(e.b, " msg=request"...)
}

func (e *lineEncoder) end() {
	if e.json {
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, '\n')
}

func (e *lineEncoder) key(k string) {
	if e.json {
		e.b = append(e.b, ',', '"')
		e.b = append(e.b, k...)
		e.b = append(e.b, '"', ':')
		return
	}
	e.b = append(e.b, ' ')
	e.b = append(e.b, k...)
	e.b = append(e.b, '=')
}

func (e *lineEncoder) str(k, v string) {
	if e.mask != nil {
		v = e.mask(v)
	}
	e.key(k)
	switch {
	case e.json:
		e.b = jsonstr.Append(e.b, v)
	case needsQuoting(v):
		e.b = strconv.AppendQuote(e.b, v)
	default:
		e.b = append(e.b, v...)
	}
}

func (e *lineEncoder) int(k string, v int) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, int64(v), 10)
}

func (e *lineEncoder) bool(k string, v bool) {
	e.key(k)
	e.b = strconv.AppendBool(e.b, v)
}

// num writes v as slog does: strconv's shortest 'g' in text; in JSON, what encoding/json
// writes (slog calls it), which is 'f' but for the very small and very large.
func (e *lineEncoder) num(k string, v float64) {
	e.key(k)
	if !e.json {
		e.b = strconv.AppendFloat(e.b, v, 'g', -1, 64)
		return
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		e.bad = true
		return
	}
	f := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		f = 'e'
	}
	e.b = strconv.AppendFloat(e.b, v, f, -1, 64)
	if n := len(e.b); f == 'e' && n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
		e.b[n-2] = e.b[n-1] // e-09 to e-9, as encoding/json
		e.b = e.b[:n-1]
	}
}

// needsQuoting is slog's text handler's test of a value: empty, or holding a space, an '=',
// a '"', a control character or a rune that is not printable (a backslash alone is not).
func needsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b <= ' ' || b == '=' || b == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
