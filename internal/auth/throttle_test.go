package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestClient(t *testing.T) {
	for _, tc := range []struct{ name, remote, want string }{
		{"IPv4", "10.0.0.1:5000", "10.0.0.1"},
		{"IPv6 by its /64", "[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"the same /64", "[2001:db8:1:2:ffff::1]:1", "2001:db8:1:2::/64"},
		{"IPv4 mapped", "[::ffff:10.0.0.1]:1", "10.0.0.1"},
		{"no port", "10.0.0.2", "10.0.0.2"},
		{"garbage", "pipe", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/admin/keys", nil)
			r.RemoteAddr = tc.remote
			if got := Client(r); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The fingerprint names a token's scheme and first characters, keyed: the same head is
// one fingerprint, another head or another secret another one, and it holds no part of
// the token.
func TestFingerprint(t *testing.T) {
	a, b := NewThrottle(ThrottleOptions{Secret: "one"}), NewThrottle(ThrottleOptions{Secret: "two"})
	tok := UserPrefix + "AbCdEfGh" + "rest-of-it"
	if a.fingerprint(tok) != a.fingerprint(UserPrefix+"AbCdEfGh"+"else") {
		t.Errorf("two tokens of one head: two fingerprints")
	}
	for _, other := range []string{UserPrefix + "AbCdEfGx", Prefix + "AbCdEfGh", "AbCdEfGh"} {
		if a.fingerprint(tok) == a.fingerprint(other) {
			t.Errorf("%q and %q: one fingerprint", tok, other)
		}
	}
	if a.fingerprint(tok) == b.fingerprint(tok) {
		t.Errorf("one fingerprint under two secrets")
	}
	if fp := a.fingerprint(tok); strings.Contains(fp, "AbCd") || len(fp) != 16 {
		t.Errorf("got fingerprint %q, want 16 hex digits", fp)
	}
}

// A burst of concurrent wrong guesses from one address gets no more verdicts than the
// limit: each reserves its place before its token is checked. A success gives its place
// back.
func TestThrottleBurst(t *testing.T) {
	var failures []Failure
	var mu sync.Mutex
	th := NewThrottle(ThrottleOptions{Secret: "s", Record: func(_ context.Context, f Failure) {
		mu.Lock()
		failures = append(failures, f)
		mu.Unlock()
	}})
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/admin/keys", nil)
			a, err := th.Try(r, SurfaceAdmin, "guess-"+NewSecret())
			if te := (*ThrottledError)(nil); errors.As(err, &te) {
				if te.Wait <= 0 || te.Wait > ThrottleWindow {
					t.Errorf("got wait %v, want within the window", te.Wait)
				}
				return
			} else if err != nil {
				t.Error(err)
				return
			}
			passed.Add(1)
			a.End(r.Context(), ReasonInvalid)
		})
	}
	wg.Wait()
	if passed.Load() != ThrottleLimit || len(failures) != ThrottleLimit {
		t.Errorf("got %d verdicts and %d failures recorded, want %d", passed.Load(), len(failures), ThrottleLimit)
	}
	for _, f := range failures {
		if f.Client != "192.0.2.1" || f.Reason != ReasonInvalid || f.Surface != SurfaceAdmin || f.Action != "GET /admin/keys" {
			t.Errorf("got failure %+v", f)
		}
	}
	// Another address: a success gives its place back, so 20 of them leave room for 10 failures.
	for i := range 30 {
		r := httptest.NewRequest("GET", "/admin/keys", nil)
		r.RemoteAddr = "192.0.2.2:1"
		a, err := th.Try(r, SurfaceAdmin, "admin-"+NewSecret())
		if err != nil {
			t.Fatalf("attempt %d: got %v, want it to pass", i+1, err)
		}
		reason := ""
		if i >= 20 {
			reason = ReasonInvalid
		}
		a.End(r.Context(), reason)
	}
	r := httptest.NewRequest("GET", "/admin/keys", nil)
	r.RemoteAddr = "192.0.2.2:1"
	if _, err := th.Try(r, SurfaceAdmin, "x"); err == nil {
		t.Errorf("the 11th failure of 192.0.2.2: not refused")
	}
	// No token is no attempt: nothing to count, nothing refused.
	if a, err := th.Try(r, SurfaceAdmin, ""); a != nil || err != nil {
		t.Errorf("no token: got %v, %v; want no attempt", a, err)
	}
}

// Behind trusted proxies the client is the nearest X-Forwarded-For address that is not one
// of them; a peer that is no proxy, or a chain a client forged to the left, changes nothing.
func TestClientBehindProxies(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"no header", "10.0.0.1:5000", nil, "10.0.0.1"},
		{"one hop", "10.0.0.1:5000", []string{"203.0.113.7"}, "203.0.113.7"},
		{"a forged left part", "10.0.0.1:5000", []string{"198.51.100.1, 203.0.113.7"}, "203.0.113.7"},
		{"two proxies", "10.0.0.1:5000", []string{"203.0.113.7, 10.2.3.4"}, "203.0.113.7"},
		{"two headers", "10.0.0.1:5000", []string{"203.0.113.7", "10.2.3.4"}, "203.0.113.7"},
		{"an untrusted peer", "192.0.2.9:5000", []string{"203.0.113.7"}, "192.0.2.9"},
		{"garbage stops the walk", "10.0.0.1:5000", []string{"203.0.113.7, nonsense, 10.9.9.9"}, "10.9.9.9"},
		{"proxies only", "10.0.0.1:5000", []string{"10.1.1.1"}, "10.1.1.1"},
		{"IPv6 by its /64", "[::1]:5000", []string{"2001:db8:1:2::99"}, "2001:db8:1:2::/64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/admin/keys", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := Client(r, proxies...); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if got, peer := Client(r), Client(&http.Request{RemoteAddr: tc.remote}); got != peer {
				t.Errorf("without proxies: got %q, want the peer %q", got, peer)
			}
		})
	}
}
