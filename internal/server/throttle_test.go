package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// from is a client whose connections leave from ip (on loopback, any 127.x.y.z): another
// client address, as the gateway sees it.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// call sends method url with token (Bearer) or, for POST /console/session, in the body,
// and reads the answer.
func call(t *testing.T, c *http.Client, method, url, token string) reply {
	t.Helper()
	var body io.Reader
	if strings.HasSuffix(url, "/console/session") {
		b, _ := json.Marshal(map[string]string{"token": token})
		body = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

// wrongToken is a personal token's shape with random characters: no two share a
// fingerprint unless they share head.
func wrongToken(head string) string {
	return auth.UserPrefix + head + strings.TrimPrefix(auth.NewSecret(), auth.Prefix)
}

// throttled checks that r is the throttle's 429: the admin API's error shape, a
// Retry-After within the minute.
func throttled(t *testing.T, what string, r reply) {
	t.Helper()
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != http.StatusTooManyRequests || r.errCode() != "too_many_failed_attempts" || err != nil || ra < 1 || ra > 60 {
		t.Errorf("%s: got %d %s, Retry-After %q; want 429 too_many_failed_attempts, Retry-After 1..60", what, r.status, r.body, r.header.Get("Retry-After"))
	}
}

// The 11th wrong token in a minute from one address is refused (429, Retry-After), the
// right token from that address too (no verdict while throttled), and the right token
// from another address still passes. Each failure is in the metrics and the audit log;
// no answer, log line or audit entry holds a token presented.
func TestAdminThrottlePerAddress(t *testing.T) {
	var log logBuffer
	yaml := simConfig + "auth: {admin_token: " + admin + "}\n"
	url, srv := serveServer(t, yaml, nil, time.Minute, &log)
	sdk, err := telemetry.NewSDK(context.Background(), telemetry.Config{Prometheus: true, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	server.SetTelemetry(srv, sdk.TracerProvider, sdk.MeterProvider, sdk.Metrics)

	attacker, other := from("127.0.0.2"), from("127.0.0.3")
	var presented, answers []string
	for i := range 10 {
		tok := wrongToken(fmt.Sprintf("%02d", i))
		presented = append(presented, tok)
		r := call(t, attacker, "GET", url+"/admin/keys", tok)
		answers = append(answers, string(r.body), fmt.Sprint(r.header))
		if r.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: got %d %s, want 401", i+1, r.status, r.body)
		}
	}
	tok := wrongToken("xx")
	presented = append(presented, tok)
	r := call(t, attacker, "GET", url+"/admin/keys", tok)
	answers = append(answers, string(r.body), fmt.Sprint(r.header))
	throttled(t, "the 11th wrong token", r)
	throttled(t, "the right token from the throttled address", call(t, attacker, "GET", url+"/admin/keys", admin))
	if r := call(t, other, "GET", url+"/admin/keys", admin); r.status != http.StatusOK {
		t.Errorf("the right token from another address: got %d %s, want 200", r.status, r.body)
	}
	// The console's sign-in counts against the same address.
	throttled(t, "a sign-in from the throttled address", call(t, attacker, "POST", url+"/console/session", wrongToken("cs")))

	// The metrics: 10 failures, 3 refusals (the admin API's two and the sign-in's one).
	res, err := other.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	count := func(name string, labels map[string]string) float64 {
		var n float64
		for _, m := range fams[name].GetMetric() {
			match := true
			for _, l := range m.Label {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					match = false
				}
			}
			if match {
				n += m.GetCounter().GetValue()
			}
		}
		return n
	}
	if got := count("sluice_auth_failures_total", map[string]string{"sluice_surface": "admin_api", "sluice_reason": "invalid"}); got != 10 {
		t.Errorf("got sluice_auth_failures_total{admin_api,invalid} %v, want 10", got)
	}
	if got := count("sluice_auth_throttled_total", nil); got != 3 {
		t.Errorf("got sluice_auth_throttled_total %v, want 3", got)
	}

	// The audit log: one entry per failure, by anonymous, naming the address.
	r = call(t, other, "GET", url+"/admin/audit?resource_kind=auth_failure&limit=100", admin)
	var page struct{ Data []logstore.AuditEntry }
	if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil {
		t.Fatalf("GET /admin/audit: got %d %s", r.status, r.body)
	}
	if len(page.Data) != 10 {
		t.Fatalf("got %d audit entries of failures, want 10: %s", len(page.Data), r.body)
	}
	e := page.Data[0]
	var f auth.Failure
	_ = json.Unmarshal(e.After, &f)
	if e.User != "anonymous" || e.ResourceID != "127.0.0.2" || e.Status != 401 || e.Action != "GET /admin/keys" ||
		f.Surface != auth.SurfaceAdmin || f.Reason != auth.ReasonInvalid || len(f.Fingerprint) != 16 {
		t.Errorf("got the audit entry %+v (after %s), want anonymous, 127.0.0.2, 401, GET /admin/keys, admin_api, invalid, a fingerprint", e, e.After)
	}
	for _, p := range presented {
		body := strings.TrimPrefix(p, auth.UserPrefix)
		for _, where := range []struct{ name, text string }{
			{"an answer", strings.Join(answers, "\n")}, {"the log", log.String()}, {"the audit log", string(r.body)}} {
			if strings.Contains(where.text, body) || strings.Contains(where.text, body[:12]) {
				t.Errorf("%s holds a token presented (%s...)", where.name, body[:4])
			}
		}
	}
}

// Wrong tokens that share their first characters are limited whatever address sends them:
// the 11th from an 11th address is refused, and so is that head from a fresh address,
// while another token from it gets its 401.
func TestAdminThrottlePerToken(t *testing.T) {
	url := serveGate(t, simConfig+"auth: {admin_token: "+admin+"}\n", nil, time.Minute, nil)
	for i := range 10 {
		if r := call(t, from(fmt.Sprintf("127.0.1.%d", i+1)), "GET", url+"/admin/keys", wrongToken("AbCdEfGh")); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: got %d %s, want 401", i+1, r.status, r.body)
		}
	}
	throttled(t, "the 11th token of that head", call(t, from("127.0.1.11"), "GET", url+"/admin/keys", wrongToken("AbCdEfGh")))
	fresh := from("127.0.1.12")
	throttled(t, "that head from a fresh address", call(t, fresh, "POST", url+"/console/session", wrongToken("AbCdEfGh")))
	if r := call(t, fresh, "GET", url+"/admin/keys", wrongToken("ZyXwVuTs")); r.status != http.StatusUnauthorized {
		t.Errorf("another token from a fresh address: got %d %s, want 401", r.status, r.body)
	}
}

// The console's sign-in is throttled like the admin API: a success between the failures
// forgets none of them (the 10th failure comes after it), then 429, the right token
// included; the right token from another address signs in.
func TestSignInThrottle(t *testing.T) {
	url := serveGate(t, simConfig+"auth: {admin_token: "+admin+"}\n", nil, time.Minute, nil)
	c := from("127.0.2.1")
	for i := range 10 {
		if i == 9 {
			if r := call(t, c, "POST", url+"/console/session", admin); r.status != http.StatusOK {
				t.Fatalf("the right token after 9 failures: got %d %s, want 200", r.status, r.body)
			}
		}
		if r := call(t, c, "POST", url+"/console/session", wrongToken(fmt.Sprintf("%02d", i))); r.status != http.StatusUnauthorized {
			t.Fatalf("sign-in %d: got %d %s, want 401", i+1, r.status, r.body)
		}
	}
	throttled(t, "the 11th sign-in", call(t, c, "POST", url+"/console/session", admin))
	if r := call(t, from("127.0.2.2"), "POST", url+"/console/session", admin); r.status != http.StatusOK {
		t.Errorf("a sign-in from another address: got %d %s, want 200", r.status, r.body)
	}
}

// Two replicas on one Redis count together: 5 failures on one and 5 on the other, then the
// 11th on either is refused, on both; Redis holds no token presented.
func TestFleetAdminThrottle(t *testing.T) {
	srv := redistest.Start(t)
	var log logBuffer
	gw := fleet(t, srv, "", "closed", "", &log)
	c := from("127.0.3.1")
	var presented []string
	for i := range 10 {
		tok := wrongToken(fmt.Sprintf("%02d", i))
		presented = append(presented, tok)
		if r := call(t, c, "GET", gw[i/5]+"/admin/keys", tok); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d on replica %d: got %d %s, want 401", i+1, i/5, r.status, r.body)
		}
	}
	throttled(t, "the 11th wrong token on replica 1", call(t, c, "GET", gw[1]+"/admin/keys", wrongToken("xx")))
	throttled(t, "the right token on replica 0", call(t, c, "GET", gw[0]+"/admin/keys", admin))
	if r := call(t, from("127.0.3.2"), "GET", gw[0]+"/admin/keys", admin); r.status != http.StatusOK {
		t.Errorf("the right token from another address: got %d %s, want 200", r.status, r.body)
	}
	for _, p := range presented {
		noSecret(t, srv, &log, p)
	}
}

// While Redis is down, redis.on_failure decides: open counts on each replica alone (the
// 11th failure on one replica is refused), closed refuses every token (503).
func TestFleetAdminThrottleOutage(t *testing.T) {
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			srv := redistest.Start(t)
			gw := fleet(t, srv, "", policy, "", nil)
			srv.Stop(t)
			c := from("127.0.4.1")
			if policy == "closed" {
				if r := call(t, c, "GET", gw[0]+"/admin/keys", admin); r.status != http.StatusServiceUnavailable {
					t.Errorf("the admin token with Redis down: got %d %s, want 503", r.status, r.body)
				}
				return
			}
			// Guesses at the admin token: a personal token's shape would ask the users' store,
			// in Redis too (503).
			guess := func() string { return "guess-" + auth.NewSecret() }
			for i := range 10 {
				if r := call(t, c, "GET", gw[0]+"/admin/keys", guess()); r.status != http.StatusUnauthorized {
					t.Fatalf("wrong token %d: got %d %s, want 401", i+1, r.status, r.body)
				}
			}
			throttled(t, "the 11th wrong token with Redis down", call(t, c, "GET", gw[0]+"/admin/keys", guess()))
			if r := call(t, from("127.0.4.2"), "GET", gw[0]+"/admin/audit", admin); r.status != http.StatusOK { // not in Redis
				t.Errorf("the right token from another address: got %d %s, want 200", r.status, r.body)
			}
		})
	}
}
