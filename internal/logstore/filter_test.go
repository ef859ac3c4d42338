package logstore

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func TestParseFilter(t *testing.T) {
	yes := true
	cur := encodeCursor(keyset{Time: now.Add(-time.Minute), ID: "req_1"})
	tests := []struct {
		name  string
		query string
		want  Filter
	}{
		{"defaults", "", Filter{From: now.Add(-24 * time.Hour), To: now, Limit: 100}},
		{"empty values are absent", "key=&alias=&limit=&stream=", Filter{From: now.Add(-24 * time.Hour), To: now, Limit: 100}},
		{"all", "from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00%2B02:00&key=key_1&alias=fast&target=openai/gpt-4o" +
			"&status=502&kind=unavailable&stream=true&cache=hit&affinity=moved&request_id=a%2Fb%25+c&q=hello+world&limit=1000&cursor=" + cur,
			Filter{From: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 5, 1, 22, 0, 0, 0, time.UTC),
				Key: "key_1", Alias: "fast", Target: "openai/gpt-4o", Status: 502, Kind: "unavailable", Stream: &yes,
				Cache: "hit", Affinity: "moved", RequestID: "a/b% c", Q: "hello world", Limit: 1000, Cursor: cur}},
		{"from only", "from=2026-05-31T00:00:00.5Z", Filter{From: time.Date(2026, 5, 31, 0, 0, 0, 5e8, time.UTC), To: now, Limit: 100}},
		{"to only", "to=2026-05-01T00:00:00Z", Filter{From: time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Limit: 100}},
		{"from equals to", "from=2026-05-01T00:00:00Z&to=2026-05-01T00:00:00Z", Filter{From: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Limit: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseFilter(v, now)
			if err != nil {
				t.Fatalf("ParseFilter(%s): %v", tc.query, err)
			}
			if !sameFilter(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct{ query, param string }{
		{"model=x", "model"},
		{"key=a&key=b", "key"},
		{"from=yesterday", "from"},
		{"to=2026-13-01T00:00:00Z", "to"},
		{"from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z", "from"},
		{"from=2026-06-01T12:00:01Z", "from"}, // after the default to
		{"status=abc", "status"},
		{"status=99", "status"},
		{"status=600", "status"},
		{"kind=broken", "kind"},
		{"kind=none", "kind"},
		{"stream=yes", "stream"},
		{"stream=1", "stream"},
		{"cache=maybe", "cache"},
		{"affinity=sticky", "affinity"},
		{"affinity=hit", "affinity"},
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=99999999999999999999", "limit"},
		{"limit=-5", "limit"},
		{"cursor=!!!", "cursor"},
		{"cursor=AAAA", "cursor"},
		{"cursor=" + encodeCursor(keyset{Time: now, ID: "x"}) + "=", "cursor"},
		{"key=" + strings.Repeat("k", 257), "key"},
		{"alias=%ff", "alias"},
		{"target=a%00b", "target"},
		{"q=" + strings.Repeat("q", 1025), "q"},
		{"request_id=" + strings.Repeat("r", 257), "request_id"},
		{"request_id=a%00b", "request_id"},
		{"request_id=a&request_id=b", "request_id"},
	}
	for _, tc := range tests {
		t.Run(tc.query[:min(len(tc.query), 40)], func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseFilter(v, now)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *llm.Error", err)
			}
			if e.Kind != llm.Invalid || e.Status != 400 || e.Param != tc.param || e.Code != "invalid_filter" ||
				e.Type != "invalid_request_error" || !strings.Contains(e.Message, tc.param) {
				t.Errorf("got %+v, want Invalid, 400, param %s named in the message", e, tc.param)
			}
		})
	}
}

func sameFilter(a, b Filter) bool {
	sa, sb := a.Stream, b.Stream
	a.Stream, b.Stream = nil, nil
	af, at, bf, bt := a.From, a.To, b.From, b.To
	a.From, a.To, b.From, b.To = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b && af.Equal(bf) && at.Equal(bt) && (sa == nil) == (sb == nil) && (sa == nil || *sa == *sb)
}

func FuzzParseFilter(f *testing.F) {
	f.Add("from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z&key=k&status=200&stream=false&limit=5")
	f.Add("cursor=" + encodeCursor(keyset{Time: now, ID: "req_1"}))
	f.Add("cursor=AQAAAAAAAAAAeA")
	f.Add("q=%25_%5C&kind=timeout&cache=coalesced")
	f.Add("affinity=kept&cache=hit")
	f.Add("from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59.999999999Z")
	f.Add("limit=1000&limit=1")
	f.Fuzz(func(t *testing.T, query string) {
		v, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		got, err := ParseFilter(v, now)
		if err != nil {
			var e *llm.Error
			_, emptyName := v[""]
			if !errors.As(err, &e) || e.Param == "" && !emptyName || e.Status != 400 || e.Kind != llm.Invalid {
				t.Fatalf("ParseFilter(%q): got %v, want an *llm.Error naming a parameter", query, err)
			}
			return
		}
		if got.From.After(got.To) || got.Limit < 1 || got.Limit > MaxLimit {
			t.Fatalf("ParseFilter(%q) accepted %+v", query, got)
		}
		if got.Cursor != "" {
			k, err := decodeCursor(got.Cursor)
			if err != nil {
				t.Fatalf("accepted cursor %q does not decode: %v", got.Cursor, err)
			}
			if again := encodeCursor(k); again != got.Cursor {
				t.Fatalf("cursor %q decodes to %+v, which encodes to %q", got.Cursor, k, again)
			}
		}
		again, err := ParseFilter(got.Values(), now.Add(time.Hour))
		if err != nil {
			t.Fatalf("ParseFilter(%q) = %+v, whose Values %v fail: %v", query, got, got.Values(), err)
		}
		if !sameFilter(again, got) {
			t.Fatalf("round trip of %q: got %+v, want %+v", query, again, got)
		}
	})
}
