// Package console is the operator's web console at /console/: the request log, usage charts,
// virtual keys and the health of targets, in plain JavaScript embedded in the binary and
// served with the playground's Content-Security-Policy (one site: shared navigation, style
// and DOM helpers). The pages call the admin API; what this package decides is who may:
// signing in with the admin token gives a session, a random id held in an HttpOnly,
// SameSite=Strict cookie and kept in a Store the replicas share; every change made with it
// carries the session's CSRF token; signing out deletes it from the Store, so it ends on
// every replica. A user's session acts for the user as they are at each call, and ends
// with them (deleted, their role changed, their token revoked). The server asks Authorize
// whether an admin API request carries such a session, in place of the admin token.
package console

import (
	"context"
	"embed"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/playground"
)

// Prefix is the console's path: its page is Prefix itself, its files and its session
// under it.
const Prefix = "/console/"

// DefaultTTL is how long a session lasts when Options.TTL is not set: a working day, so
// that a forgotten tab does not hold the admin API open for good.
const DefaultTTL = 12 * time.Hour

//go:embed static
var static embed.FS

// site is the console's files, read once.
var site = playground.NewSite(static, "static", Prefix, Prefix)

// Options configure a Console.
type Options struct {
	// Check reports whether token is the admin token, in constant time (the server's
	// auth.Token.Matches). Nil: the admin API is off, and signing in answers 404.
	Check func(token string) bool
	// Store keeps the sessions. Nil: a MemoryStore, this replica's only; with several
	// replicas, the Redis one (redisstore.ConsoleSessions), so that any replica serves a
	// session and a sign-out ends it on all.
	Store Store
	// TTL is how long a session lasts from its sign-in (default DefaultTTL); it is not
	// extended by use.
	TTL time.Duration
	// Now is the clock (default time.Now): tests move it past a session's end.
	Now func() time.Time
	// Open is a gateway whose auth is off, on loopback only (make run): a session needs no
	// token (Check is not asked), and the page signs in by itself. It still carries its
	// CSRF token.
	Open bool
	// OIDC are the OpenID Connect issuers the console signs in with (oidc.go), beside the
	// admin token; Provision makes or updates the user an issuer signed in, and returns
	// whom the session acts for (nil: OpenID Connect is refused).
	OIDC      []OIDC
	Provision func(ctx context.Context, id Identity) (*Who, error)
	// Personal is whom a user's personal API token acts for, so that a user without an
	// OpenID provider signs in too: nil and no error when token is not a live one, an
	// error when the users' store did not answer. Nil: only the admin token signs in. It
	// names the token in Who.Token, for Current.
	Personal func(ctx context.Context, token string) (*Who, error)
	// Current is whom a user's session (signed in with a personal token or OpenID Connect)
	// acts for now, asked on every call of the admin API and of /console/session: signed as
	// at sign-in (with its Who.Token), the user as the users' store has them now; nil and no
	// error when the session must end (the user deleted, their role changed, the token
	// revoked or expired), an error when the store did not answer (the session is refused).
	// Nil: sessions act as they were signed in (tests).
	Current func(ctx context.Context, signed Who) (*Who, error)
	// Throttle limits failed sign-ins per address and token (throttle.go); nil: none.
	Throttle Throttle
}

// Console serves the console and checks its sessions. Safe for concurrent use.
type Console struct {
	check func(string) bool
	open  bool
	store Store
	ttl   time.Duration
	now   func() time.Time
	mux   *http.ServeMux

	oidc      []*issuer
	provision func(context.Context, Identity) (*Who, error)
	personal  func(context.Context, string) (*Who, error)
	current   func(context.Context, Who) (*Who, error)
	throttle  Throttle
}

// New makes a Console.
func New(o Options) *Console {
	c := &Console{check: o.Check, open: o.Open, store: o.Store, ttl: o.TTL, now: o.Now, provision: o.Provision, personal: o.Personal,
		current: o.Current, throttle: o.Throttle}
	for _, oi := range o.OIDC {
		c.oidc = append(c.oidc, &issuer{OIDC: oi})
	}
	if c.store == nil {
		c.store = NewMemoryStore()
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.now == nil {
		c.now = time.Now
	}
	// The route table is data (ServeMux patterns): GET patterns serve HEAD too, and a
	// method a path does not have is a 405 with Allow.
	m := http.NewServeMux()
	m.Handle("GET /console/{file...}", site)
	m.Handle("GET /console", http.RedirectHandler(Prefix, http.StatusMovedPermanently))
	m.HandleFunc("GET /console/session", c.status)
	m.HandleFunc("POST /console/session", c.signIn)
	m.HandleFunc("DELETE /console/session", c.signOut)
	m.HandleFunc("GET /console/oidc/{name}/login", c.login)
	m.HandleFunc("GET /console/oidc/{name}/callback", c.callback)
	c.mux = m
	return c
}

// Handler serves the console's page and files under Prefix (GET and HEAD), and its session
// at /console/session (GET: whether signed in, with the CSRF token; POST: sign in with
// {"token": "<admin token>"}; DELETE: sign out). Mount it for /console and /console/*.
func (c *Console) Handler() http.Handler { return c.mux }
