package console

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDC is an OpenID Connect issuer the console signs in with: the authorization code flow
// with PKCE (RFC 7636) and a nonce, the ID token's issuer, audience, expiry and signature
// checked by go-oidc against the issuer's discovered keys.
type OIDC struct {
	// Name names the issuer in its paths (/console/oidc/NAME/login) and on the page.
	Name                           string
	Issuer, ClientID, ClientSecret string
	RedirectURL                    string // https://gateway/console/oidc/NAME/callback
	Scopes                         []string
	GroupsClaim                    string // the claim that lists the user's groups; default "groups"
	Roles                          []RoleMap
	DefaultRole                    string // the role of a user no mapping matches; "": refused
	DefaultTeam                    string // their team; "": none (a non-admin then makes no key)
	// Client reaches the issuer (tests: a loopback one); nil: http.DefaultClient.
	Client *http.Client
}

// issuer is an OIDC with what its discovery found, made once.
type issuer struct {
	OIDC
	mu           sync.Mutex
	provider     *oidc.Provider
	verifier     *oidc.IDTokenVerifier
	config       oauth2.Config
	discovered   time.Time
	errDiscovery error
}

// RoleMap gives the members of Group a role, in Team for team_admin, viewer and member.
type RoleMap struct {
	Group, Role, Team string
}

// Identity is who an issuer signed in: the user to create at their first sign-in (or
// update: the issuer's groups decide their role and teams at each). Provider is the
// issuer's name in the configuration (OIDC.Name), Issuer its URL.
type Identity struct {
	Provider                     string
	Issuer, Subject, Email, Name string
	Role                         string
	Teams                        []string
}

// flowTTL bounds a sign-in from the click to the callback.
const flowTTL = 10 * time.Minute

// Flow cookies: Lax, since the callback is a navigation from the issuer's site (a Strict
// cookie would not come with it); it holds only the id of the flow the Store keeps.
const (
	flowTLS   = "__Host-sluice_oidc"
	flowPlain = "sluice_oidc"
)

// flow is what the Store keeps of a sign-in under way (JSON), under "oidc:" and the SHA-256
// of its cookie: any replica takes the callback, and it is used once.
type flow struct {
	Provider string `json:"provider"`
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	ReturnTo string `json:"return_to"`
}

// roleRank orders the roles: a user in several mapped groups gets the strongest.
var roleRank = map[string]int{"admin": 4, "team_admin": 3, "viewer": 2, "member": 1}

// discover finds the issuer's endpoints and keys once (again after a failure, at most
// every 10 s: an issuer down at start must not keep the console from signing in later).
func (o *issuer) discover(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return nil
	}
	if o.errDiscovery != nil && time.Since(o.discovered) < 10*time.Second {
		return o.errDiscovery
	}
	o.discovered = time.Now()
	p, err := oidc.NewProvider(o.ctx(ctx), o.Issuer)
	if o.errDiscovery = err; err != nil {
		return err
	}
	o.provider = p
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.ClientID})
	scopes := append([]string{oidc.ScopeOpenID}, o.Scopes...)
	o.config = oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: slices.Compact(scopes)}
	return nil
}

func (o *issuer) ctx(ctx context.Context) context.Context {
	if o.Client != nil {
		return oidc.ClientContext(ctx, o.Client)
	}
	return ctx
}

// providers are the issuers as the sign-in page shows them.
func (c *Console) providers() []provider {
	var ps []provider
	for _, o := range c.oidc {
		ps = append(ps, provider{Name: o.Name, Login: Prefix + "oidc/" + o.Name + "/login"})
	}
	return ps
}

func (c *Console) issuer(r *http.Request) *issuer {
	name := r.PathValue("name")
	for _, o := range c.oidc {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// SafeReturn reports whether to is where a sign-in may send the browser back: a path of
// this origin under the console, not a URL of another (no scheme, no host, not "//evil" nor
// "/\evil", which browsers read as another host).
func SafeReturn(to string) bool {
	if !strings.HasPrefix(to, Prefix) || strings.ContainsAny(to, "\\\x00\r\n\t") || strings.HasPrefix(to, "//") {
		return false
	}
	u, err := url.Parse(to)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil && !strings.Contains(u.Path, "/../")
}

// login answers GET /console/oidc/{name}/login?return_to=/console/...: the browser goes to
// the issuer with a new state, nonce and PKCE challenge, kept in the Store under a
// short-lived cookie of this browser.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	o := c.issuer(r)
	if o == nil {
		fail(w, http.StatusNotFound, "unknown_issuer", "No OpenID Connect issuer of this name is configured.")
		return
	}
	to := r.URL.Query().Get("return_to")
	if to == "" {
		to = Prefix
	}
	if !SafeReturn(to) {
		fail(w, http.StatusBadRequest, "invalid_return_to", "return_to must be a path under /console/ of this gateway.")
		return
	}
	if err := o.discover(r.Context()); err != nil {
		fail(w, http.StatusBadGateway, "issuer_unavailable", "The OpenID Connect issuer did not answer its discovery. Retry shortly.")
		return
	}
	f := flow{Provider: o.Name, State: random(32), Nonce: random(32), Verifier: oauth2.GenerateVerifier(), ReturnTo: to}
	value := random(32)
	b, _ := json.Marshal(f)
	if err := c.store.Put(r.Context(), "oidc:"+storeID(value), "", b, flowTTL); err != nil {
		storeDown(w)
		return
	}
	http.SetCookie(w, c.flowCookie(r, value, int(flowTTL/time.Second)))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, o.config.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

func (c *Console) flowCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	name := flowPlain
	if secure(r) {
		name = flowTLS
	}
	return &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: secure(r),
		SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
}

// takeFlow returns the flow of r's cookie and deletes it: a callback is taken once.
func (c *Console) takeFlow(w http.ResponseWriter, r *http.Request) (*flow, error) {
	name := flowPlain
	if secure(r) {
		name = flowTLS
	}
	ck, err := r.Cookie(name)
	gone := c.flowCookie(r, "", -1)
	http.SetCookie(w, gone)
	if err != nil || len(ck.Value) != 43 {
		return nil, nil
	}
	id := "oidc:" + storeID(ck.Value)
	b, err := c.store.Get(r.Context(), id)
	if err != nil || b == nil {
		return nil, err
	}
	if err := c.store.Delete(r.Context(), id); err != nil {
		return nil, err
	}
	f := &flow{}
	if json.Unmarshal(b, f) != nil {
		return nil, nil
	}
	return f, nil
}

// errorCode keeps of an issuer's error only what looks like an OAuth error code.
var errorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// callback answers GET /console/oidc/{name}/callback?code=&state=: the flow of this browser
// must be this issuer's and its state the one given; the code is exchanged with the PKCE
// verifier; the ID token's issuer, audience, expiry, signature (go-oidc) and nonce (here)
// are checked; its groups give the role and teams; the user is made or updated; a new
// session starts, and the browser goes back where it was.
func (c *Console) callback(w http.ResponseWriter, r *http.Request) {
	o := c.issuer(r)
	if o == nil {
		fail(w, http.StatusNotFound, "unknown_issuer", "No OpenID Connect issuer of this name is configured.")
		return
	}
	f, err := c.takeFlow(w, r)
	if err != nil {
		storeDown(w)
		return
	}
	q := r.URL.Query()
	switch {
	case f == nil || f.Provider != o.Name:
		fail(w, http.StatusBadRequest, "invalid_state", "This sign-in was not started in this browser, or it took longer than 10 minutes. Sign in again.")
		return
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1:
		fail(w, http.StatusBadRequest, "invalid_state", "The state does not match this browser's sign-in. Sign in again.")
		return
	case q.Get("error") != "":
		code := q.Get("error")
		if !errorCode.MatchString(code) {
			code = "error"
		}
		fail(w, http.StatusUnauthorized, "issuer_refused", "The identity provider refused the sign-in: "+code+".")
		return
	}
	who, err := c.identify(r.Context(), o, q.Get("code"), f)
	if err != nil {
		fail(w, http.StatusUnauthorized, "invalid_id_token", "The sign-in could not be verified: "+err.Error())
		return
	}
	if who == nil {
		fail(w, http.StatusForbidden, "no_role", "Your groups give you no role on this gateway. Ask its operator.")
		return
	}
	if c.start(w, r, *who) == nil {
		return
	}
	if !SafeReturn(f.ReturnTo) { // checked at login; again, it came back through the Store
		f.ReturnTo = Prefix
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, f.ReturnTo, http.StatusSeeOther)
}

// signInError is a refusal of an ID token; its text is ours, never the token's content.
type signInError string

func (e signInError) Error() string { return string(e) }

// identify exchanges code, checks the ID token and returns whom it signs in (nil: no role).
func (c *Console) identify(ctx context.Context, o *issuer, code string, f *flow) (*Who, error) {
	if err := o.discover(ctx); err != nil {
		return nil, signInError("the issuer did not answer.")
	}
	tok, err := o.config.Exchange(o.ctx(ctx), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return nil, signInError("the issuer refused the code.")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, signInError("the issuer sent no ID token.")
	}
	idt, err := o.verifier.Verify(o.ctx(ctx), raw) // issuer, audience, expiry, signature
	if err != nil {
		return nil, signInError("the ID token is not valid (issuer, audience, expiry or signature).")
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return nil, signInError("the ID token's nonce is not this sign-in's (a replayed token).")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, signInError("the ID token's claims are not JSON.")
	}
	id := Identity{Provider: o.Name, Issuer: idt.Issuer, Subject: idt.Subject}
	id.Email, _ = claims["email"].(string)
	id.Name, _ = claims["name"].(string)
	id.Role, id.Teams = o.mapGroups(groupsOf(claims, o.GroupsClaim))
	if id.Role == "" {
		return nil, nil
	}
	if c.provision == nil {
		return nil, signInError("this gateway keeps no users.")
	}
	who, err := c.provision(ctx, id)
	if err != nil {
		return nil, signInError("the user store is unreachable; retry shortly.")
	}
	return who, nil
}

// groupsOf reads the groups claim: a list of strings, or one string.
func groupsOf(claims map[string]any, name string) []string {
	if name == "" {
		name = "groups"
	}
	switch v := claims[name].(type) {
	case string:
		return []string{v}
	case []any:
		var gs []string
		for _, g := range v {
			if s, ok := g.(string); ok {
				gs = append(gs, s)
			}
		}
		return gs
	}
	return nil
}

// mapGroups is the role and teams the groups give: the strongest role of the mappings that
// match, and the teams of all of them (DefaultRole in DefaultTeam when none matches).
func (o *OIDC) mapGroups(groups []string) (role string, teams []string) {
	for _, m := range o.Roles {
		if !slices.Contains(groups, m.Group) {
			continue
		}
		if roleRank[m.Role] > roleRank[role] {
			role = m.Role
		}
		if m.Team != "" && !slices.Contains(teams, m.Team) {
			teams = append(teams, m.Team)
		}
	}
	if role == "" && o.DefaultRole != "" {
		role = o.DefaultRole
		if o.DefaultTeam != "" {
			teams = []string{o.DefaultTeam}
		}
	}
	return role, teams
}
