package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/sse"
)

// LogStore is the request log's store, as the edge names it in its options (it knows no
// store package: the gateway opens it).
type LogStore = logstore.Store

// Stream is an answer an Op writes as it goes, once it has decided to answer 200: the edge
// calls Serve with the response and a maker of its event stream (heartbeats, write
// deadlines). An error after the first byte cuts the answer.
type Stream interface {
	Serve(ctx context.Context, w http.ResponseWriter, events func() *sse.Writer) error
}

// Download is a file (GET /admin/logs/export): Type is its Content-Type and Name its file
// name; Write writes the body.
type Download struct {
	Type, Name string
	Write      func(ctx context.Context, w io.Writer) error
}

func (d Download) Serve(ctx context.Context, w http.ResponseWriter, _ func() *sse.Writer) error {
	w.Header().Set("Content-Type", d.Type)
	w.Header().Set("Content-Disposition", `attachment; filename="`+d.Name+`"`)
	w.WriteHeader(http.StatusOK)
	return d.Write(ctx, w)
}

// Events is a stream of Server-Sent Events (GET /admin/logs/tail): Send calls send with the
// data of each event (one line of JSON) until ctx ends or send fails.
type Events struct {
	Send func(ctx context.Context, send func(data []byte) error) error
}

func (e Events) Serve(ctx context.Context, _ http.ResponseWriter, events func() *sse.Writer) error {
	ew := events()
	defer ew.Close()
	if err := ew.Start(func(http.Header) {}); err != nil {
		return nil // the client left
	}
	_ = e.Send(ctx, func(data []byte) error {
		return ew.Frame(append(append([]byte("data: "), data...), "\n\n"...))
	})
	return nil // it ends when the client leaves, or the store fails: nothing to answer then
}

// TailEvery is how often a live tail asks the store for new records: it reads the store, so
// it sees every replica's.
const TailEvery = time.Second

// logsOff is the answer of a log route when no log is kept.
var logsOff = &llm.Error{Kind: llm.NotFound, Code: "logs_off", Type: "invalid_request_error",
	Message: "The request log is off (logs.url is empty)."}

// filter is the filter of in's query, the parameters the route takes itself (names) left out.
func (a API) filter(in Input, names ...string) (logstore.Filter, error) {
	if a.Logs == nil {
		return logstore.Filter{}, logsOff
	}
	v := url.Values{}
	for n, vs := range in.Query {
		v[n] = vs
	}
	for _, n := range names {
		delete(v, n)
	}
	return logstore.ParseFilter(v, time.Now())
}

// logs serves GET /admin/logs: a page of records, newest first, and the cursor of the next.
func (a API) logs(ctx context.Context, in Input) (int, any, error) {
	f, err := a.filter(in)
	if err != nil {
		return 0, nil, err
	}
	st, err := a.logsFor(ctx)
	if err != nil {
		return 0, nil, err
	}
	p, err := st.Query(ctx, f)
	if err != nil {
		return 0, nil, unreachableLogs(err)
	}
	var next *string
	if p.NextCursor != "" {
		next = &p.NextCursor
	}
	if p.Records == nil {
		p.Records = []logstore.Record{}
	}
	return http.StatusOK, struct {
		Object string            `json:"object"`
		Data   []logstore.Record `json:"data"`
		Next   *string           `json:"next_cursor"`
	}{"list", p.Records, next}, nil
}

// log serves GET /admin/logs/{id}: one request's record, by its id (X-Sluice-Record-Id), else
// the newest the caller may read whose request id (X-Request-Id) is id: a client that chose
// its request id finds its request by it, and another team's request of the same id is
// neither shown nor hides it (issue 47). ?request_id= lists them all.
func (a API) log(ctx context.Context, in Input) (int, any, error) {
	if a.Logs == nil {
		return 0, nil, logsOff
	}
	st, err := a.logsFor(ctx)
	if err != nil {
		return 0, nil, err
	}
	r, err := st.Get(ctx, in.ID)
	if errors.Is(err, logstore.ErrNotFound) && in.ID != "" {
		var p logstore.Page
		if p, err = st.Query(ctx, logstore.Filter{RequestID: in.ID, Limit: 1}); err == nil {
			if len(p.Records) == 0 {
				err = logstore.ErrNotFound
			} else {
				r = &p.Records[0]
			}
		}
	}
	if errors.Is(err, logstore.ErrNotFound) {
		return 0, nil, &llm.Error{Kind: llm.NotFound, Code: "log_not_found", Type: "invalid_request_error", Param: "id",
			Message: "No request with this id in the log (it may be older than logs.retention, or not written yet)."}
	}
	if err != nil {
		return 0, nil, unreachableLogs(err)
	}
	return http.StatusOK, r, nil
}

// export serves GET /admin/logs/export?format=jsonl|csv: every record the filter selects
// (limit is the page size of the reads, not a bound).
func (a API) export(ctx context.Context, in Input) (int, any, error) {
	f, err := a.filter(in, "format")
	if err != nil {
		return 0, nil, err
	}
	if err := a.Logs.Ping(ctx); err != nil {
		return 0, nil, unreachableLogs(err)
	}
	st, err := a.logsFor(ctx)
	if err != nil {
		return 0, nil, err
	}
	switch in.Query.Get("format") {
	case "", "jsonl":
		return http.StatusOK, Download{Type: "application/x-ndjson", Name: "sluice-logs.jsonl",
			Write: func(ctx context.Context, w io.Writer) error { return logstore.ExportJSONL(ctx, st, f, w) }}, nil
	case "csv":
		return http.StatusOK, Download{Type: "text/csv; charset=utf-8", Name: "sluice-logs.csv",
			Write: func(ctx context.Context, w io.Writer) error { return logstore.ExportCSV(ctx, st, f, w) }}, nil
	}
	return 0, nil, &llm.Error{Kind: llm.Invalid, Code: "invalid_filter", Type: "invalid_request_error", Param: "format",
		Message: "format must be jsonl or csv."}
}

// tail serves GET /admin/logs/tail: the records the filter selects as they arrive, as
// Server-Sent Events (from now on: from and cursor are not taken).
func (a API) tail(ctx context.Context, in Input) (int, any, error) {
	f, err := a.filter(in)
	if err != nil {
		return 0, nil, err
	}
	if in.Query.Has("from") || in.Query.Has("cursor") {
		return 0, nil, &llm.Error{Kind: llm.Invalid, Code: "invalid_filter", Type: "invalid_request_error", Param: "from",
			Message: "A tail starts now: from and cursor are for GET /admin/logs."}
	}
	st, err := a.logsFor(ctx)
	if err != nil {
		return 0, nil, err
	}
	f.From = time.Now() // now, before the client sees the stream open: a request made then is shown
	return http.StatusOK, Events{Send: func(ctx context.Context, send func([]byte) error) error {
		ctx, stop := a.whileCaller(ctx)
		defer stop()
		return logstore.Tail(ctx, st, f, TailEvery, func(r logstore.Record) error {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			return send(b)
		})
	}}, nil
}

// TailRecheck is how often a live tail asks the users' store whether its caller is still
// who they were when it opened.
var TailRecheck = 5 * time.Second

// whileCaller is ctx ended as soon as the user it was authorised for (a console session or
// a personal token) is deleted or moved to another role or teams, so that a tail opened
// before stops with the rest of their session (issue 47); the admin token's, or a caller
// with no users' store, runs to the client's end. stop ends the check.
func (a API) whileCaller(ctx context.Context) (context.Context, func()) {
	p := auth.PrincipalFrom(ctx)
	if p == nil || p == auth.Bootstrap || a.Users == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(TailRecheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			u, err := a.Users.User(ctx, p.User)
			if errors.Is(err, auth.ErrNoUser) || (err == nil && (u.Role != p.Role || !sameTeams(u.Principal().Teams, p.Teams))) {
				cancel()
				return
			} // another error: the store did not answer; ask again at the next tick
		}
	}()
	return ctx, func() { cancel(); <-done }
}

// sameTeams tells whether a and b hold the same teams, in any order.
func sameTeams(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(t string) bool { return !slices.Contains(b, t) })
}

func unreachableLogs(err error) error {
	var le *llm.Error
	if errors.As(err, &le) && le.Kind == llm.Invalid {
		return err
	}
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "logs_unavailable",
		Type: "server_error", Message: "The request log's store is unreachable. Retry shortly."}
}

// fromLog reports whether GET /admin/usage asks what only the request log can answer: by
// hour (group_by=hour, or bucket=hour|day) or by a key metadata field (group_by=meta.team).
func fromLog(v url.Values) bool {
	g := v.Get("group_by")
	return g == "hour" || strings.HasPrefix(g, "meta.") || v.Has("bucket")
}

// logUsage serves those reports from the request log: the same days, key and team as the
// account's report (UsageQuery), within the caller's scope sc (readScope), each line a
// bucket of a group, with its errors and p95 time to first token.
func (a API) logUsage(ctx context.Context, v url.Values, sc *logstore.Scope) (int, any, error) {
	st := a.logsIn(sc)
	if st == nil {
		return 0, nil, &llm.Error{Kind: llm.Invalid, Code: "logs_off", Type: "invalid_request_error", Param: "group_by",
			Message: "Reports by hour, by bucket or by key metadata come from the request log, which is off (logs.url)."}
	}
	g, b := v.Get("group_by"), logstore.Bucket(v.Get("bucket"))
	w := url.Values{"key": v["key"], "team": v["team"], "from": v["from"], "to": v["to"]}
	if g == "hour" {
		g, b = "", logstore.Hour
	}
	q, err := UsageQuery(w, time.Now())
	if err != nil {
		return 0, nil, err
	}
	switch b {
	case logstore.Whole, logstore.Hour, logstore.Day:
	default:
		return 0, nil, badUsage("bucket", "bucket is hour or day.")
	}
	lq := logstore.UsageQuery{From: q.From, To: q.To.Add(24 * time.Hour), Bucket: b, GroupBy: g, Key: q.Key, Team: q.Team}
	rows, err := st.Usage(ctx, lq)
	if err != nil {
		return 0, nil, unreachableLogs(err)
	}
	return http.StatusOK, logReport(q, v.Get("group_by"), string(b), rows), nil
}
