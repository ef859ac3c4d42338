package server_test

import (
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// GET /admin/usage answers one shape for every source, grouping and bucket (issue 50): the
// account's names (input_tokens, output_tokens, cache_read_tokens...), a bucket and a group
// on every line, and a total; the document's one schema holds every answer, and every
// answer's numbers are what the clients were sent: their usage, their X-Sluice-Cost-Usd, and
// the one request that failed.
func TestUsageShape(t *testing.T) {
	gw := serveGate(t, sqliteLogs(t, "")+`providers: {sim: {kind: sim}}
prices: {sim/echo: {input: 1, output: 2}, "sim/text?len=40": {input: 3, output: 5}}
models:
  default: [sim/echo]
  long: ["sim/text?len=40"]
  broken: ["sim/text?fail=500"]
`, nil, time.Hour, nil)
	sc := newSpecCheck(t, &gateway{url: gw})
	if r := do(t, "POST", gw+"/admin/teams", logsAdmin, `{"name":"red"}`); r.status != 201 {
		t.Fatalf("POST /admin/teams: %d %s", r.status, r.body)
	}
	_, red := createKey(t, gw, logsAdmin, `{"name":"red-bot","team":"red","metadata":{"team":"red"}}`)
	_, blue := createKey(t, gw, logsAdmin, `{"name":"blue-bot","metadata":{"team":"blue"}}`)
	var sent struct {
		requests, errors, in, out int64
		cost                      float64
	}
	for i, c := range []struct{ key, model string }{{red, "default"}, {blue, "default"}, {red, "long"}, {blue, "long"}, {red, "default"}, {red, "broken"}} {
		r := do(t, "POST", gw+"/v1/chat/completions", c.key, say(c.model, "request "+strconv.Itoa(i)+" of the usage shape", false, ""))
		sent.requests++
		if r.status != 200 {
			sent.errors++
		}
		var ans struct {
			Usage struct {
				Prompt     int64 `json:"prompt_tokens"`
				Completion int64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		_ = json.Unmarshal(r.body, &ans)
		sent.in += ans.Usage.Prompt
		sent.out += ans.Usage.Completion
		cost, _ := strconv.ParseFloat(r.header.Get("X-Sluice-Cost-Usd"), 64)
		sent.cost += cost
	}
	if sent.errors != 1 || sent.in == 0 || sent.out == 0 || sent.cost == 0 {
		t.Fatalf("got %+v sent, want usage, a cost and one error", sent)
	}
	waitLogs(t, gw, "", int(sent.requests))
	day := time.Now().UTC().Format("2006-01-02")
	type line struct {
		Bucket, Group                 *string
		Key, Alias, Target, Team, Day *string
		Requests, Errors              int64
		InputTokens                   int64   `json:"input_tokens"`
		OutputTokens                  int64   `json:"output_tokens"`
		CostUSD                       float64 `json:"cost_usd"`
	}
	var queries []url.Values
	for _, g := range []string{"key", "alias", "target", "day", "team"} {
		queries = append(queries, url.Values{"group_by": {g}})
	}
	queries = append(queries, url.Values{"group_by": {"hour"}})
	for _, b := range []string{"", "hour", "day"} {
		for _, g := range []string{"", "key", "alias", "target", "team", "meta.team"} {
			queries = append(queries, url.Values{"group_by": {g}, "bucket": {b}})
		}
	}
	for _, q := range queries {
		if q.Get("group_by") == "" {
			q.Del("group_by")
		}
		q.Set("from", day)
		q.Set("to", day)
		t.Run(q.Encode(), func(t *testing.T) {
			x := sc.call(t, "GET", "/admin/usage?"+q.Encode(), logsAdmin, "", 200) // the document's one schema
			var rep struct {
				Source, Bucket string
				Data           []map[string]any
				Total          map[string]any
			}
			if err := json.Unmarshal(x.body, &rep); err != nil {
				t.Fatal(err)
			}
			want := "account"
			if q.Has("bucket") || q.Get("group_by") == "hour" || q.Get("group_by") == "meta.team" {
				want = "logs"
			}
			if rep.Source != want {
				t.Errorf("got source %q, want %q", rep.Source, want)
			}
			var sum line
			for _, m := range rep.Data {
				b, _ := json.Marshal(m)
				var l line
				if err := json.Unmarshal(b, &l); err != nil || l.Bucket == nil || l.Group == nil {
					t.Fatalf("line %s: no bucket or group (%v)", b, err)
				}
				if _, err := time.Parse(time.RFC3339, *l.Bucket); err != nil {
					t.Errorf("line %s: the bucket is not RFC 3339", b)
				}
				if named := map[string]*string{"key": l.Key, "alias": l.Alias, "target": l.Target, "team": l.Team, "day": l.Day}[q.Get("group_by")]; q.Get("group_by") != "" && q.Get("group_by") != "hour" && q.Get("group_by") != "meta.team" && (named == nil || *named != *l.Group) {
					t.Errorf("line %s: the group is not under its label's name", b)
				}
				sum.Requests += l.Requests
				sum.Errors += l.Errors
				sum.InputTokens += l.InputTokens
				sum.OutputTokens += l.OutputTokens
				sum.CostUSD += l.CostUSD
			}
			b, _ := json.Marshal(rep.Total)
			var total line
			_ = json.Unmarshal(b, &total)
			total.Bucket, total.Group, sum.Bucket, sum.Group = nil, nil, nil, nil
			for what, got := range map[string]line{"the lines' sum": sum, "the total": total} {
				if got.Requests != sent.requests || got.Errors != sent.errors || got.InputTokens != sent.in ||
					got.OutputTokens != sent.out || math.Abs(got.CostUSD-sent.cost) > 1e-9 {
					t.Errorf("%s: got requests %d, errors %d, tokens %d in %d out, cost %v; want what was sent: %+v (%s)",
						what, got.Requests, got.Errors, got.InputTokens, got.OutputTokens, got.CostUSD, sent, x.body)
				}
			}
		})
	}
}
