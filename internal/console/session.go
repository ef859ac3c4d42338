package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// Cookie names. Over TLS the cookie takes the __Host- prefix, which browsers accept only
// with Secure, Path=/ and no Domain: a sibling subdomain cannot set or shadow it
// (RFC 6265bis §4.1.3.2). Over plain HTTP (a gateway on loopback) the prefix is not
// allowed, so the name differs.
const (
	cookieTLS   = "__Host-sluice_console"
	cookiePlain = "sluice_console"
)

// CSRFHeader is the header that carries the session's CSRF token on every change.
const CSRFHeader = "X-CSRF-Token"

// maxSignIn bounds the sign-in body: a token and its JSON.
const maxSignIn = 4 << 10

// session is what the Store holds for one session (JSON).
type session struct {
	CSRF string    `json:"csrf"`
	End  time.Time `json:"end"`
	// Who is whom the session was signed in for; nil in the sessions of the admin token made
	// before users existed, which are the bootstrap admin's (Admin).
	Who *Who `json:"who,omitempty"`
	// Token is Who.Token: the personal token the session was signed in with, as Personal
	// named it; "" for any other sign-in.
	Token string `json:"token,omitempty"`
}

// Who is whom a session acts for in the admin API: the server makes it the request's
// principal (auth.Principal), so that the role policy applies to the console as to a token.
type Who struct {
	User  string   `json:"user"`
	Role  string   `json:"role"`
	Teams []string `json:"teams,omitempty"`
	// Token names the personal token a session was signed in with (Personal sets it: its
	// hash, never the token), so that Current ends the session with the token. Never shown.
	Token string `json:"-"`
}

// Admin is the bootstrap admin: a session signed in with the admin token (or an open one).
var Admin = Who{User: "admin", Role: "admin"}

func (s *session) who() Who {
	if s.Who == nil {
		return Admin
	}
	w := *s.Who
	w.Token = s.Token
	return w
}

// user is the user a session was signed in for, "" for the bootstrap admin's (the admin
// token, an open gateway): a user's id is never Admin.User (auth.Bootstrap's).
func (s *session) user() string {
	if s.Who == nil || s.Who.User == Admin.User {
		return ""
	}
	return s.Who.User
}

// secure reports whether r reached the gateway over TLS, directly or through a proxy that
// says so (the first X-Forwarded-Proto). A client that claims https over plain HTTP only
// gets a Secure cookie its browser will not send back.
func secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

func cookieName(r *http.Request) string {
	if secure(r) {
		return cookieTLS
	}
	return cookiePlain
}

// random is n random bytes in unpadded base64url.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// storeID is the Store's id of a cookie value: its SHA-256, so that a copy of the Store (a
// Redis dump) holds no session a browser could present.
func storeID(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}

// lookup returns r's session and the Store's id of it; nil when r has none that is alive.
// An error is the Store's: the caller fails closed.
func (c *Console) lookup(r *http.Request) (*session, string, error) {
	ck, err := r.Cookie(cookieName(r))
	if err != nil || len(ck.Value) != 43 { // 32 random bytes in base64url
		return nil, "", nil
	}
	id := storeID(ck.Value)
	b, err := c.store.Get(r.Context(), id)
	if err != nil || b == nil {
		return nil, id, err
	}
	s := &session{}
	if json.Unmarshal(b, s) != nil || s.CSRF == "" || !c.now().Before(s.End) {
		return nil, id, nil
	}
	return s, id, nil
}

// live is lookup, then a user's session re-checked against the user as they are now
// (Options.Current): it acts with the user's current role and teams, and one Current ends
// (the user deleted, their role changed, the token it was signed in with revoked) is
// deleted from the Store, for every replica at once. The users' store is read on every
// call, never a cache, so that no replica acts on a user another one changed. The
// bootstrap admin's sessions are not checked: no user stands behind them.
func (c *Console) live(r *http.Request) (*session, Who, error) {
	s, id, err := c.lookup(r)
	if err != nil || s == nil {
		return nil, Who{}, err
	}
	who := s.who()
	if c.current == nil || s.user() == "" {
		return s, who, nil
	}
	now, err := c.current(r.Context(), who)
	if err != nil {
		return nil, Who{}, err
	}
	if now == nil {
		_ = c.store.Delete(r.Context(), id) // best effort: Current ends it on every call anyway
		return nil, Who{}, nil
	}
	now.Token = ""
	return s, *now, nil
}

// Authorize reports whether r may use the admin API on the strength of a console session,
// and for whom, as they are now (live): it carries a live session's cookie and, unless its
// method is GET or HEAD, the session's CSRF token in X-CSRF-Token. A Store or users' store
// that fails denies (fail closed). The server accepts it in place of the admin token.
func (c *Console) Authorize(r *http.Request) (Who, bool) {
	s, who, err := c.live(r)
	if err != nil || s == nil {
		return Who{}, false
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead || csrfMatches(r, s) {
		return who, true
	}
	return Who{}, false
}

// EndUser ends every session of user (the Store's index of them), on every replica at
// once: the user was deleted or their role changed. The bootstrap admin has no index.
func (c *Console) EndUser(ctx context.Context, user string) error {
	if user == "" || user == Admin.User {
		return nil
	}
	return c.store.EndUser(ctx, user)
}

func csrfMatches(r *http.Request, s *session) bool {
	got := r.Header.Get(CSRFHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}

// state is the answer of GET and POST /console/session.
type state struct {
	SignedIn  bool       `json:"signed_in"`
	Open      bool       `json:"open,omitempty"` // Options.Open: sign in with no token
	CSRF      string     `json:"csrf,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Who       *Who       `json:"who,omitempty"`
	// Providers are the OpenID Connect issuers to sign in with (oidc.go).
	Providers []provider `json:"providers,omitempty"`
}

// provider is an issuer as the sign-in page shows it: a button to Login.
type provider struct {
	Name  string `json:"name"`
	Login string `json:"login"`
}

// signedIn is the answer for s, acting for who (as they are now).
func signedIn(s *session, who Who) state {
	end := s.End.UTC()
	return state{SignedIn: true, CSRF: s.CSRF, ExpiresAt: &end, Who: &who}
}

// status answers GET /console/session: the page asks it at load, and gets the CSRF token
// it keeps in memory only.
func (c *Console) status(w http.ResponseWriter, r *http.Request) {
	s, who, err := c.live(r)
	switch {
	case err != nil:
		storeDown(w)
	case s == nil:
		answer(w, http.StatusOK, state{Open: c.open, Providers: c.providers()})
	default:
		answer(w, http.StatusOK, signedIn(s, who))
	}
}

// signIn answers POST /console/session {"token": "<admin or personal token>"}: a new session, whatever
// the request held before (an id is never taken from the client, so none can be fixed on
// it), and the previous one deleted.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if c.check == nil && !c.open {
		fail(w, http.StatusNotFound, "admin_api_off", "The admin API is off: this gateway has no auth.admin_token.")
		return
	}
	// JSON only: a cross-site HTML form can send text/plain without a preflight.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, "unsupported_media_type", `The body must be application/json: {"token": "<admin token>"}.`)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSignIn))
	var in struct {
		Token string `json:"token"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err != nil || dec.Decode(&in) != nil || dec.More() {
		fail(w, http.StatusBadRequest, "invalid_body", `The body must be {"token": "<admin token>"}.`)
		return
	}
	who := &Who{User: Admin.User, Role: Admin.Role}
	if !c.open {
		end, ok := c.try(w, r, in.Token) // throttle.go
		if !ok {
			return
		}
		var err error
		if who, err = c.signer(r.Context(), in.Token); err != nil {
			end(false)
			storeDown(w)
			return
		}
		if end(who == nil); who == nil {
			fail(w, http.StatusUnauthorized, "invalid_admin_token", "The token is neither the admin token nor a live personal token.")
			return
		}
	}
	if s := c.start(w, r, *who); s != nil {
		answer(w, http.StatusOK, signedIn(s, *who))
	}
}

// signer is whom token signs in as: the bootstrap admin for the admin token, a user for
// their personal token (Options.Personal); nil for any other. The session acts for the
// user with the role and teams they have at each call (live), as an OpenID Connect one
// does, until it ends, they sign out, or Current ends it.
func (c *Console) signer(ctx context.Context, token string) (*Who, error) {
	switch {
	case token == "":
		return nil, nil
	case c.check != nil && c.check(token):
		return &Who{User: Admin.User, Role: Admin.Role}, nil
	case c.personal != nil:
		return c.personal(ctx, token)
	}
	return nil, nil
}

// start makes a new session for who and sets its cookie: a new random id, whatever the
// request held before (an id is never taken from the client, so none can be fixed on it;
// the previous session is deleted). Nil when the Store failed (answered with a 503).
func (c *Console) start(w http.ResponseWriter, r *http.Request, who Who) *session {
	if _, old, _ := c.lookup(r); old != "" {
		_ = c.store.Delete(r.Context(), old) // best effort: it would expire anyway
	}
	now := c.now()
	value := random(32)
	s := &session{CSRF: random(32), End: now.Add(c.ttl), Who: &who, Token: who.Token}
	b, _ := json.Marshal(s)
	if err := c.store.Put(r.Context(), storeID(value), s.user(), b, c.ttl); err != nil {
		storeDown(w)
		return nil
	}
	http.SetCookie(w, c.cookie(r, value, now))
	return s
}

// signOut answers DELETE /console/session: the session is deleted from the Store (every
// replica stops accepting it at once) and the cookie cleared. A live session must come
// with its CSRF token; without a live one, the cookie is cleared all the same.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	s, id, err := c.lookup(r)
	if err != nil {
		storeDown(w)
		return
	}
	if s != nil {
		if !csrfMatches(r, s) {
			fail(w, http.StatusForbidden, "invalid_csrf_token", "Signing out needs the session's X-CSRF-Token.")
			return
		}
		if err := c.store.Delete(r.Context(), id); err != nil {
			storeDown(w)
			return
		}
	}
	ck := c.cookie(r, "", c.now())
	ck.MaxAge, ck.Expires = -1, time.Unix(0, 0)
	http.SetCookie(w, ck)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// cookie is the session's cookie: HttpOnly (no script reads it), SameSite=Strict (no other
// site's page sends it), Secure over TLS, for the whole origin (the admin API is under
// /admin), ending with the session.
func (c *Console) cookie(r *http.Request, value string, now time.Time) *http.Cookie {
	return &http.Cookie{Name: cookieName(r), Value: value, Path: "/", HttpOnly: true, Secure: secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(c.ttl / time.Second), Expires: now.Add(c.ttl).UTC()}
}

// errBody is the admin API's error shape.
type errBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	var e errBody
	e.Error.Message, e.Error.Code, e.Error.Type = msg, code, "invalid_request_error"
	answer(w, status, e)
}

func storeDown(w http.ResponseWriter) {
	var e errBody
	e.Error.Message, e.Error.Code, e.Error.Type = "The session store is unreachable. Retry shortly.", "session_store_unavailable", "server_error"
	answer(w, http.StatusServiceUnavailable, e)
}

// answer writes v as JSON; sessions are never cached.
func answer(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
