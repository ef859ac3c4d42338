package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// The throttle of the admin API's tokens and the console's sign-in (issue 47): a guess at
// the admin token or a personal token is an attempt; at most ThrottleLimit attempts that
// failed fall in any ThrottleWindow per client address, and as many per token fingerprint
// (the first characters of what was presented, whatever address sends them). Past that,
// every attempt from that address or with that fingerprint is refused (429 with
// Retry-After) before its token is looked at, the right token included: an answer that
// told a right guess from a wrong one would leave the guessing as fast as before. Other
// addresses and other tokens are not touched.
//
// An attempt reserves its place in both logs before its token is checked and gives it back
// when the token was good (or when a store could not tell), so that a burst of concurrent
// guesses gets no more verdicts than the limit, and a success takes nothing from another's
// count. The logs are package limit's sliding ones: in Redis, shared by the replicas, when
// the gateway has one (redisstore.Limiter, which follows redis.on_failure: open counts on
// this replica alone while Redis is down, closed refuses), in memory otherwise.

// ThrottleLimit failures per ThrottleWindow, per address and per token fingerprint.
const (
	ThrottleLimit  = 10
	ThrottleWindow = time.Minute
)

// Surfaces a token is presented on (the metric's and the audit log's).
const (
	SurfaceAdmin   = "admin_api" // a Bearer or x-api-key on /admin/
	SurfaceConsole = "console"   // POST /console/session
)

// Reasons of a failure.
const (
	ReasonInvalid = "invalid" // neither the admin token nor a live personal token
	ReasonExpired = "expired" // a personal token past its expiry
)

// fingerprintChars is how much of a token's random part its fingerprint covers: enough to
// tell two tokens apart, far too little to help guess the rest.
const fingerprintChars = 8

// Failure is a failed attempt as the audit log records it: where, from which address,
// why, and the token's fingerprint, never the token.
type Failure struct {
	Action      string `json:"action"` // "POST /console/session", "GET /admin/keys"
	Surface     string `json:"surface"`
	Reason      string `json:"reason"`
	Client      string `json:"client"`
	Fingerprint string `json:"fingerprint"`
}

// ThrottleOptions configure a Throttle.
type ThrottleOptions struct {
	// Limiter keeps the logs (nil: a limit.Memory of this process).
	Limiter limit.Limiter
	// Secret keys the fingerprints (an HMAC): the admin token, which every replica has and
	// no reader of Redis or of the audit log does.
	Secret string
	// Record writes a failure to the audit log (admin.API.AuthFailed); nil: not recorded.
	Record func(ctx context.Context, f Failure)
	// Limit and Window default to ThrottleLimit and ThrottleWindow (tests lower them).
	Limit  int64
	Window time.Duration
	// Proxies are the addresses whose X-Forwarded-For is believed (auth.trusted_proxies):
	// the client is then the nearest address in it that is not one of them. None: the peer.
	Proxies []netip.Prefix
}

// Throttle limits failed attempts to authenticate. Safe for concurrent use. A nil
// *Throttle limits nothing.
type Throttle struct {
	l       limit.Limiter
	rule    limit.Rule
	key     []byte
	record  func(context.Context, Failure)
	proxies []netip.Prefix
}

// NewThrottle returns a Throttle for o.
func NewThrottle(o ThrottleOptions) *Throttle {
	if o.Limiter == nil {
		o.Limiter = &limit.Memory{}
	}
	if o.Limit <= 0 {
		o.Limit = ThrottleLimit
	}
	if o.Window <= 0 {
		o.Window = ThrottleWindow
	}
	k := sha256.Sum256([]byte("sluice throttle\x00" + o.Secret))
	return &Throttle{l: o.Limiter, rule: limit.Rule{Limit: o.Limit, Window: o.Window}, key: k[:], record: o.Record,
		proxies: o.Proxies}
}

// Attempt is one attempt begun by Try, to End once with its outcome. A nil *Attempt (no
// token, no throttle) ends as a no-op.
type Attempt struct {
	t    *Throttle
	f    Failure
	id   string
	held []string // the logs holding its reservation
}

// ThrottledError refuses an attempt: its address or its token failed too often. Wait is
// how long until the oldest failure leaves the window.
type ThrottledError struct{ Wait time.Duration }

func (e *ThrottledError) Error() string {
	return "too many failed attempts to authenticate; retry in " + e.Wait.String()
}

// Try begins an attempt with token by r's client on surface; no token is no attempt (nil).
// A refused one is a *ThrottledError, counted (sluice_auth_throttled_total); any other
// error is the logs' store's (Redis unreachable under on_failure: closed): the caller
// refuses the request.
func (t *Throttle) Try(r *http.Request, surface, token string) (*Attempt, error) {
	if t == nil || token == "" {
		return nil, nil
	}
	ctx := r.Context()
	a := &Attempt{t: t, id: randomHex(12), f: Failure{Action: r.Method + " " + r.URL.Path, Surface: surface,
		Client: Client(r, t.proxies...), Fingerprint: t.fingerprint(token)}}
	for _, key := range []string{"authfail:addr:" + a.f.Client, "authfail:token:" + a.f.Fingerprint} {
		res, err := t.l.Reserve(ctx, limit.Ask{Key: key, ID: a.id, Requests: t.rule})
		if err == nil && !res.OK {
			telemetry.AuthThrottled(ctx, surface)
			err = &ThrottledError{Wait: max(res.RetryAfter, time.Second)}
		}
		if err != nil {
			a.release(ctx)
			return nil, err
		}
		a.held = append(a.held, key)
	}
	return a, nil
}

// Principal is admins' principal of secret, presented in r on surface, through the
// throttle: a *ThrottledError, unchecked, when its address or fingerprint failed too often;
// a failure is counted, a success is not.
func (t *Throttle) Principal(r *http.Request, surface string, admins *Admins, secret string) (*Principal, error) {
	a, err := t.Try(r, surface, secret)
	if err != nil {
		return nil, err
	}
	p, err := admins.Principal(r.Context(), secret, time.Now())
	a.End(r.Context(), Reason(err))
	return p, err
}

// End ends the attempt: reason "" when it did not fail (the token was good, or a store
// could not tell), which gives its places back; else it stays counted as a failure, in
// the metric (sluice_auth_failures_total) and the audit log.
func (a *Attempt) End(ctx context.Context, reason string) {
	if a == nil {
		return
	}
	if reason == "" {
		a.release(ctx)
		return
	}
	telemetry.AuthFailure(ctx, a.f.Surface, reason)
	if a.t.record != nil {
		f := a.f
		f.Reason = reason
		a.t.record(ctx, f)
	}
}

// release gives back the places the attempt holds; one Redis missed stays counted until it
// leaves the window (never fewer failures counted than made).
func (a *Attempt) release(ctx context.Context) {
	for _, key := range a.held {
		_ = a.t.l.Release(context.WithoutCancel(ctx), key, a.id)
	}
	a.held = nil
}

// Reason is the failure reason of an error of Admins.Principal: "" when it is none of the
// caller's (nil, or a store's).
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrExpired):
		return ReasonExpired
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrMissing):
		return ReasonInvalid
	}
	return ""
}

// fingerprint names a token in the logs and the audit log without holding it: an HMAC of
// its scheme (sk-sluice-user-, sk-sluice-) and the fingerprintChars characters after it,
// keyed with the throttle's secret, so that no reader of Redis can test a guess against it.
func (t *Throttle) fingerprint(token string) string {
	body := strings.TrimPrefix(strings.TrimPrefix(token, UserPrefix), Prefix)
	head := token[:len(token)-len(body)] + firstChars(body, fingerprintChars)
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(head))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

func firstChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Client is the address the throttle counts r under, an IPv6 one by its /64 (which a single
// host commonly holds whole): the peer's, unless the peer is one of proxies; then the
// X-Forwarded-For chain is read from its right end (the hop nearest the gateway, the only
// end a client cannot write) and the first address that is not a proxy is the client. A
// chain of proxies only, or a value that is no address, stops at the last address known.
func Client(r *http.Request, proxies ...netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "unknown"
	}
	ip = ip.Unmap().WithZone("")
	hops := r.Header.Values("X-Forwarded-For")
	for h := len(hops) - 1; h >= 0 && trusted(ip, proxies); h-- {
		list := strings.Split(hops[h], ",")
		for i := len(list) - 1; i >= 0 && trusted(ip, proxies); i-- {
			next, err := netip.ParseAddr(strings.TrimSpace(list[i]))
			if err != nil {
				h = -1 // a forged or broken value: believe nothing left of it
				break
			}
			ip = next.Unmap().WithZone("")
		}
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// trusted tells whether ip is one of proxies.
func trusted(ip netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
