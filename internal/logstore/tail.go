package logstore

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TailLag is how late a record may reach the store, after its time, and still be shown by
// Tail: the writer's batching, a replica's spool, a long stream whose record is written at
// its end. Records later than that are in the store (Query finds them) but not in the tail.
const TailLag = 2 * time.Minute

// tailPages bounds the pages one poll of Tail reads: a live view shows the newest records,
// it does not replay a flood.
const tailPages = 5

// Tail calls each with the records f selects as they reach st, oldest first, polling every
// every (default 1 s). It polls Query, so it sees the records of every replica sharing the
// store. f's To, Limit and Cursor are its own; it starts at f.From when that is set and
// within TailLag of now (the caller's "now", taken before it answered its client, so a
// request made as soon as the client sees the stream open is shown), else at the present,
// and looks back TailLag at each poll for records written late, showing each record once.
// It returns when ctx ends (nil) or each fails (its error) or a query fails.
func Tail(ctx context.Context, st Store, f Filter, every time.Duration, each func(Record) error) error {
	if every <= 0 {
		every = time.Second
	}
	start := time.Now().UTC()
	if from := f.From.UTC(); !f.From.IsZero() && from.Before(start) && start.Sub(from) <= TailLag {
		start = from
	}
	seen := map[string]time.Time{} // ids shown, with their time, for TailLag
	newest := start
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := time.Now().UTC()
		q := f
		q.From = newest.Add(-TailLag)
		if q.From.Before(start) {
			q.From = start
		}
		q.To = now.Add(TailLag) // a replica's clock a little ahead
		q.Limit, q.Cursor = MaxLimit, ""
		var fresh []Record
		for range tailPages {
			p, err := st.Query(ctx, q)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			for _, r := range p.Records {
				if _, ok := seen[r.ID]; !ok {
					fresh = append(fresh, r)
				}
			}
			if p.NextCursor == "" {
				break
			}
			q.Cursor = p.NextCursor
		}
		slices.SortFunc(fresh, func(a, b Record) int {
			if c := a.Time.Compare(b.Time); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		for _, r := range fresh {
			seen[r.ID] = r.Time
			// A replica's clock ahead must not move the window past the others' records.
			if r.Time.After(newest) && !r.Time.After(now) {
				newest = r.Time
			}
			if err := each(r); err != nil {
				return err
			}
		}
		for id, at := range seen {
			if at.Before(newest.Add(-TailLag)) {
				delete(seen, id)
			}
		}
	}
}

// pages calls each with every record f selects, page after page, newest first, and flush
// after each page. It holds one page (MaxLimit records) at a time, whatever the number of
// records: an export of millions stays in constant memory (issue 50, TestExportMemory).
func pages(ctx context.Context, st Store, f Filter, each func(*Record) error, flush func() error) error {
	f.Limit = MaxLimit
	for {
		p, err := st.Query(ctx, f)
		if err != nil {
			return err
		}
		for i := range p.Records {
			if err := each(&p.Records[i]); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if p.NextCursor == "" {
			return nil
		}
		f.Cursor = p.NextCursor
	}
}

// flusher is what an http.ResponseWriter is besides a writer: Flush sends what it buffered.
type flusher interface{ Flush() }

// flushTo writes bw's buffer to w and, when w buffers too (an HTTP response), sends it: a
// page's records reach the client as soon as they are read, so that an export that selects
// few records of many shows its progress, and nothing piles up in front of the client.
func flushTo(bw *bufio.Writer, w io.Writer) func() error {
	return func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		if f, ok := w.(flusher); ok {
			f.Flush()
		}
		return nil
	}
}

// ExportJSONL writes every record f selects to w, one JSON object a line, newest first
// (f.Cursor starts it after a page already read; f.Limit is ignored).
func ExportJSONL(ctx context.Context, st Store, f Filter, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return pages(ctx, st, f, func(r *Record) error { return enc.Encode(r) }, flushTo(bw, w))
}

// CSVHeader is the header of ExportCSV: the record's scalar fields, in this order.
var CSVHeader = []string{"id", "time", "replica", "key_id", "key_name", "wire", "method", "path", "alias",
	"target", "attempts", "status", "kind", "stream", "first_event_ms", "first_token_ms", "duration_ms",
	"overhead_ms", "tokens_in", "tokens_out", "tokens_cached", "tokens_reasoning", "tokens_estimated",
	"cost_usd", "cache", "redactions", "user_agent", "trace_id", "error", "capture",
	// issue 46, at the end so that a reader of the columns by position still reads them
	"cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "saved_usd", "cache_dropped", "affinity",
	"request_id"} // issue 47

// ExportCSV writes every record f selects to w as CSV with CSVHeader, newest first; attempts
// is their number. A text cell that a spreadsheet would take for a formula (=, +, -, @, tab,
// CR) starts with a quote ('), as OWASP advises: a user agent is the client's to choose.
func ExportCSV(ctx context.Context, st Store, f Filter, w io.Writer) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	return pages(ctx, st, f, func(r *Record) error {
		return cw.Write([]string{text(r.ID), r.Time.UTC().Format(time.RFC3339Nano), text(r.Replica), text(r.KeyID),
			text(r.KeyName), text(r.Wire), text(r.Method), text(r.Path), text(r.Alias), text(r.Target),
			strconv.Itoa(len(r.Attempts)), strconv.Itoa(r.Status), text(r.Kind), strconv.FormatBool(r.Stream),
			num(r.FirstEventMS), num(r.FirstTokenMS), num(r.DurationMS), num(r.OverheadMS),
			strconv.Itoa(r.TokensIn), strconv.Itoa(r.TokensOut), strconv.Itoa(r.TokensCached),
			strconv.Itoa(r.TokensReasoning), strconv.FormatBool(r.TokensEstimated), num(r.CostUSD),
			text(r.Cache), strconv.Itoa(r.Redactions), text(r.UserAgent), text(r.TraceID), text(r.Error), text(r.Capture),
			strconv.Itoa(r.CacheReadTokens), strconv.Itoa(r.CacheWriteTokens), strconv.Itoa(r.CacheWrite1hTokens),
			num(r.SavedUSD), strconv.Itoa(r.CacheDropped), text(r.Affinity), text(r.RequestID)})
	}, func() error {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return flushTo(bw, w)()
	})
}

// text defuses a cell a spreadsheet would run as a formula.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
