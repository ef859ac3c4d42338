package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// lineTexts are texts slog's handlers quote or escape, or not: empty, spaces, '=', quotes,
// backslashes, control characters, invalid UTF-8, separators, non-printable runes.
var lineTexts = []string{"", "plain", "a b", "x=y", `say "hi"`, `back\slash`, "tab\tnew\nline\r", "\b\f\x00\x1f",
	"\x7f", "é café", "\xff\xfe", "\u2028\u2029", "\u00a0nbsp", "zero\u200bwidth", "🦀", "/v1/chat/completions",
	"mock/text?len=200&chunk=10", "<tag>&amp;"}

var lineNums = []float64{0, 1.5, 1354.125, 1e-7, 1e-6, 1e21, 1e20, -3, 0.000123, 123456789.123, math.SmallestNonzeroFloat64}

func randomAccess(r *rand.Rand) *Access {
	str := func() string { return lineTexts[r.IntN(len(lineTexts))] }
	num := func() float64 { return lineNums[r.IntN(len(lineNums))] }
	dur := func() time.Duration { return time.Duration(r.Int64N(int64(10 * time.Second))) }
	a := &Access{ID: str(), Record: str(), Method: str(), Path: str(), Status: r.IntN(600), Duration: dur(),
		Model: str(), Target: str(), Attempts: r.IntN(4), Stream: r.IntN(2) == 0, FirstEvent: dur(), FirstText: dur(),
		Redactions: r.IntN(3), KeyID: str(), KeyName: str(), CostUSD: num(), Overhead: dur(), Tools: r.IntN(3),
		ToolErrors: r.IntN(2), ToolTime: dur(), Cache: str(), Kind: llm.Kind(r.IntN(8))}
	if r.IntN(3) > 0 {
		a.Usage = &Usage{Prompt: r.IntN(1e6), Completion: r.IntN(1e4), Total: r.IntN(2e6), Cached: r.IntN(100), CacheWrite: r.IntN(50)}
	}
	return a
}

// slogLine is the line slog's own handler writes for a at t, masked as a masking handler
// would.
func slogLine(t *testing.T, json bool, at time.Time, level slog.Level, a *Access, mask func(string) string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&buf, nil)
	if json {
		h = slog.NewJSONHandler(&buf, nil)
	}
	r := accessRecordAt(context.Background(), at, level, a)
	var err error
	if mask != nil {
		err = maskAll(context.Background(), h, r, mask)
	} else {
		err = h.Handle(context.Background(), r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameLine compares the line written by hand with slog's: byte for byte in text; in JSON as
// decoded values, and byte for byte unless a text holds \b or \f (which jsonstr writes as
// encoding/json does, slog as \u0008 and \u000c).
func sameLine(t *testing.T, json bool, got, want []byte) {
	t.Helper()
	if !json || !bytes.ContainsAny(want, "\b\f") && !bytes.Contains(want, []byte(`\u0008`)) && !bytes.Contains(want, []byte(`\u000c`)) {
		if !bytes.Equal(got, want) {
			t.Fatalf("line differs from slog's:\n got %q\nwant %q", got, want)
		}
		return
	}
	if g, w := decodeLine(t, got), decodeLine(t, want); !reflect.DeepEqual(g, w) {
		t.Fatalf("line decodes differently from slog's:\n got %v\nwant %v", g, w)
	}
}

func decodeLine(t *testing.T, line []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("line %q is not JSON: %v", line, err)
	}
	return m
}

// TestAccessLineAsSlog holds the access line written by hand to what slog's text and JSON
// handlers write for the same record, over random lines, masked and not.
func TestAccessLineAsSlog(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 1))
	mask := func(s string) string { return strings.ReplaceAll(s, "a", "[a]") }
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	for i := range 3000 {
		a := randomAccess(r)
		at := time.Date(2026, 12, 7, 4, 5, 6, r.IntN(1e9), time.FixedZone("", 3600*(r.IntN(5)-2)))
		level := levels[i%len(levels)]
		var m func(string) string
		if i%2 == 0 {
			m = mask
		}
		for _, js := range []bool{false, true} {
			h := NewHandler(&bytes.Buffer{}, map[bool]string{true: "json", false: "text"}[js]).(lineHandler)
			got, ok := h.appendLine(nil, context.Background(), at, level, a, m)
			if !ok {
				t.Fatalf("line %d: no line for finite floats", i)
			}
			sameLine(t, js, got, slogLine(t, js, at, level, a, m))
		}
	}
}

// TestAccessLineFallsBack: a float JSON has no literal for goes through slog, which writes
// its error in the line instead of failing it.
func TestAccessLineFallsBack(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		var buf bytes.Buffer
		log := slog.New(NewHandler(&buf, "json"))
		LogAccess(context.Background(), log, &Access{ID: "req_1", Status: 200, CostUSD: f})
		if !strings.Contains(buf.String(), `"id":"req_1"`) || !strings.Contains(buf.String(), `"cost_usd":"!ERROR:`) {
			t.Fatalf("cost %v: got line %q, want slog's with its error", f, buf.String())
		}
	}
}

// TestLogAccessWrites: LogAccess through NewHandler writes one line a request, at the level
// its outcome says, and none below the handler's level.
func TestLogAccessWrites(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, "json"))
	LogAccess(context.Background(), log, &Access{ID: "req_1", Status: 200, Path: "/v1/chat/completions"})
	LogAccess(context.Background(), log, &Access{ID: "req_2", Status: 502, Kind: llm.Unavailable})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2: %q", len(lines), buf.String())
	}
	for i, want := range []map[string]any{{"id": "req_1", "level": "INFO", "status": json.Number("200")},
		{"id": "req_2", "level": "WARN", "kind": "unavailable"}} {
		m := decodeLine(t, []byte(lines[i]))
		for k, v := range want {
			if m[k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, m[k], v)
			}
		}
	}
	buf.Reset()
	quiet := slog.New(NewHandler(&buf, "text").WithAttrs(nil))
	LogAccess(context.Background(), slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError})), &Access{ID: "req_3", Status: 200})
	if buf.Len() != 0 {
		t.Fatalf("a line below the handler's level: %q", buf.String())
	}
	LogAccess(context.Background(), quiet, &Access{ID: "req_4", Status: 200})
	if !strings.Contains(buf.String(), "id=req_4") {
		t.Fatalf("a derived handler's line: got %q", buf.String())
	}
}

// FuzzAccessLine: any texts and numbers make the line slog's handlers write.
func FuzzAccessLine(f *testing.F) {
	for i, s := range lineTexts {
		f.Add(s, lineNums[i%len(lineNums)], int64(i)*1e6)
	}
	f.Fuzz(func(t *testing.T, s string, cost float64, d int64) {
		a := &Access{ID: s, Path: s, Model: s, KeyName: s, Cache: s, CostUSD: cost, Duration: time.Duration(d), Status: 200}
		at := time.Date(2026, 12, 7, 4, 5, 6, 789e6, time.UTC)
		for _, js := range []bool{false, true} {
			h := NewHandler(&bytes.Buffer{}, map[bool]string{true: "json", false: "text"}[js]).(lineHandler)
			got, ok := h.appendLine(nil, context.Background(), at, slog.LevelInfo, a, nil)
			if !ok {
				if js && (math.IsNaN(cost) || math.IsInf(cost, 0)) {
					continue
				}
				t.Fatalf("no line for cost %v", cost)
			}
			sameLine(t, js, got, slogLine(t, js, at, slog.LevelInfo, a, nil))
		}
	})
}

// TestAccessLinesConcurrent: access lines and other lines written at once from many
// goroutines to a writer that is not safe for concurrent use come out whole, one a line
// (the race detector sees an unguarded write).
func TestAccessLinesConcurrent(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, "json"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				if i%2 == 0 {
					LogAccess(context.Background(), log, &Access{ID: fmt.Sprintf("req_%d_%d", g, i), Status: 200})
				} else {
					log.Info("other", "n", i)
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("got %d lines, want 800", len(lines))
	}
	for _, l := range lines {
		decodeLine(t, []byte(l))
	}
}
