package admin

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// param is the member a 400 names; ok false when err is not a 400.
func param(err error) (string, bool) {
	var le *llm.Error
	if !errors.As(err, &le) || llm.HTTPStatus(err) != 400 {
		return "", false
	}
	return le.Param, true
}

func TestDecodeKey(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	k := &auth.Key{Models: []string{"*"}}
	in, err := DecodeKey([]byte(`{"name":"a","models":["default"],"budget":{"daily_usd":5}}`))
	if err == nil {
		err = in.Apply(k, now)
	}
	if err != nil || k.Name != "a" || k.Models[0] != "default" || k.DailyUSD != 5 {
		t.Fatalf("got %+v, %v; want the body applied", k, err)
	}
	// Refused at decoding: not an object (null would be a key for every model), an unknown
	// or duplicate member.
	for _, body := range []string{`null`, `{"name":"a","nam":"b"}`, `{"name":"a","name":"b"}`} {
		if _, err := DecodeKey([]byte(body)); err == nil {
			t.Errorf("%s: decoded, want a 400", body)
		} else if _, ok := param(err); !ok {
			t.Errorf("%s: got %v, want a 400", body, err)
		}
	}
	// Refused when applied, naming the member.
	for _, c := range []struct{ body, param string }{
		{`{"models":[]}`, "models"},
		{`{"expires_at":"2020-01-01T00:00:00Z"}`, "expires_at"},
		{`{"budget":{"daily_usd":-1}}`, "budget"},
		{`{"metadata":{"":"x"}}`, "metadata"},
	} {
		in, err := DecodeKey([]byte(c.body))
		if err == nil {
			err = in.Apply(&auth.Key{Models: []string{"*"}}, now)
		}
		if got, ok := param(err); !ok || got != c.param {
			t.Errorf("%s: got %v, want a 400 on %s", c.body, err, c.param)
		}
	}
}

func TestStoreError(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
	}{
		{auth.ErrNotFound, 404}, {auth.ErrStatic, 409}, {auth.ErrExists, 409}, {errors.New("dial tcp: refused"), 503},
	} {
		if got := llm.HTTPStatus(StoreError(c.err)); got != c.status {
			t.Errorf("%v: got %d, want %d", c.err, got, c.status)
		}
	}
}

func TestUsageQuery(t *testing.T) {
	now := time.Date(2026, 12, 15, 10, 0, 0, 0, time.UTC)
	q, err := UsageQuery(url.Values{}, now)
	if err != nil || q.GroupBy != usage.ByKey || q.From.Format(usage.DayLayout) != "2026-12-01" || q.To.Format(usage.DayLayout) != "2026-12-15" {
		t.Errorf("defaults: got %+v %v, want this month so far by key", q, err)
	}
	for _, v := range []url.Values{{"group_by": {"model"}}, {"from": {"2026-12-20"}}, {"to": {"15/12"}}, {"from": {"2024-01-01"}}} {
		if _, err := UsageQuery(v, now); err == nil {
			t.Errorf("%v: got %v, want a 400", v, err)
		}
	}
}

// The key's access to the MCP gateway: set, shown, removed with null; bad patterns refused.
func TestKeyMCP(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	k := &auth.Key{Models: []string{"*"}}
	in, err := DecodeKey([]byte(`{"mcp":{"servers":["docs"],"tools":["docs__search*"]},"tool_calls_per_minute":30}`))
	if err == nil {
		err = in.Apply(k, now)
	}
	if err != nil || k.MCP == nil || k.MCP.Tools[0] != "docs__search*" || k.ToolCallsPerMinute != 30 {
		t.Fatalf("got %+v, %v", k, err)
	}
	if w := Encode(k); w.MCP == nil || w.MCP.Servers[0] != "docs" || w.ToolCallsPerMinute != 30 {
		t.Errorf("shown as %+v", w)
	}
	in, _ = DecodeKey([]byte(`{"mcp":null}`))
	if err := in.Apply(k, now); err != nil || k.MCP != nil || k.ToolCallsPerMinute != 30 {
		t.Errorf("mcp null: got %+v, %v; want no MCP access, the limit kept", k, err)
	}
	for _, body := range []string{`{"mcp":{"tools":["[a"]}}`, `{"mcp":{"servers":[""]}}`, `{"mcp":{"server":["x"]}}`, `{"mcp":[]}`, `{"tool_calls_per_minute":-1}`} {
		in, err := DecodeKey([]byte(body))
		if err == nil {
			err = in.Apply(&auth.Key{Models: []string{"*"}}, now)
		}
		if _, ok := param(err); !ok {
			t.Errorf("%s: got %v, want a 400", body, err)
		}
	}
}

// TestKeysService: the routes of admin.Keys over a store, and a key may attach only
// configured guardrails, on creation and on change.
func TestKeysService(t *testing.T) {
	ctx := auth.WithPrincipal(t.Context(), auth.Bootstrap)
	ks := Keys{Store: auth.NewKeys(nil, &auth.Memory{}), Guardrail: func(n string) bool { return n == "pii" }}
	status, v, err := ks.Create(ctx, "", []byte(`{"name":"a","guardrails":["pii"]}`))
	if err != nil || status != 201 {
		t.Fatalf("Create = %d, %v", status, err)
	}
	k := v.(Key)
	if k.Secret == "" || k.Name != "a" {
		t.Fatalf("created %+v", k)
	}
	if _, _, err := ks.Create(ctx, "", []byte(`{"name":"b","guardrails":["nope"]}`)); err == nil {
		t.Fatal("Create attached an unknown guardrail")
	} else if p, ok := param(err); !ok || p != "guardrails" {
		t.Fatalf("Create unknown guardrail: %v", err)
	}
	if _, _, err := ks.Patch(ctx, k.ID, []byte(`{"guardrails":["nope"]}`)); err == nil {
		t.Fatal("Patch attached an unknown guardrail")
	}
	if _, v, err := ks.Patch(ctx, k.ID, []byte(`{"rpm":7}`)); err != nil || v.(Key).RPM != 7 || v.(Key).Secret != "" {
		t.Fatalf("Patch = %+v, %v", v, err)
	}
	if _, v, err := ks.List(ctx, "", nil); err != nil || len(v.(map[string]any)["data"].([]Key)) != 1 {
		t.Fatalf("List = %+v, %v", v, err)
	}
	if _, _, err := ks.Delete(ctx, k.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ks.Get(ctx, k.ID, nil); llm.KindOf(err) != llm.NotFound {
		t.Fatalf("Get after Delete: %v", err)
	}
}
