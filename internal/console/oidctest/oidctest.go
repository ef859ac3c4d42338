// Package oidctest is an OpenID provider in this process, for tests of the console's
// sign-in (as net/http/httptest is a server): discovery, keys, an authorization endpoint that
// approves at once, and a token endpoint that checks PKCE and signs an ID token with RS256
// for the client "sluice" (or the one NewClient names), of the user ann (ann@example.com).
package oidctest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// ClientID is the audience of the ID tokens a provider made by New signs.
const ClientID = "sluice"

// Provider is the provider. Its server stops when the test that made it ends. Safe for
// concurrent use.
type Provider struct {
	// URL is the issuer's: its discovery is at URL/.well-known/openid-configuration.
	URL string

	clientID string
	key      *rsa.PrivateKey

	mu     sync.Mutex
	codes  map[string][2]string // code -> nonce, code_challenge
	tweak  func(claims map[string]any)
	signer *rsa.PrivateKey
	nonces []string // the nonces asked, in order
	groups []string
}

// New starts a provider whose ID tokens are for the client ClientID and carry the groups
// claim ["search-admins"].
func New(t testing.TB) *Provider {
	t.Helper()
	return NewClient(t, ClientID)
}

// NewClient is New for the client clientID, with a key of its own: several of them are
// several issuers, none of which knows another's codes or keys.
func NewClient(t testing.TB, clientID string) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{clientID: clientID, key: key, codes: map[string][2]string{}, groups: []string{"search-admins"}}
	m := http.NewServeMux()
	m.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		u := p.URL
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": u, "authorization_endpoint": u + "/auth",
			"token_endpoint": u + "/token", "jwks_uri": u + "/keys", "response_types_supported": []string{"code"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	m.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "alg": "RS256",
			"use": "sig", "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	})
	m.HandleFunc("GET /auth", p.authorize)
	m.HandleFunc("POST /token", p.token)
	srv := httptest.NewServer(m)
	p.URL = srv.URL
	t.Cleanup(srv.Close)
	return p
}

// authorize approves at once: the browser goes back to redirect_uri with a code bound to
// the nonce and the PKCE challenge asked.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" {
		http.Error(w, "want PKCE S256 and a nonce", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.codes[code] = [2]string{q.Get("nonce"), q.Get("code_challenge")}
	p.nonces = append(p.nonces, q.Get("nonce"))
	p.mu.Unlock()
	http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
}

// token exchanges a code, once, for an ID token when the verifier matches its challenge.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.codes[r.Form.Get("code")]
	delete(p.codes, r.Form.Get("code"))
	sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
	if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c[1] {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": p.URL, "aud": p.clientID, "sub": "ann", "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "nonce": c[0], "email": "ann@example.com", "name": "Ann", "groups": p.groups}
	if p.tweak != nil {
		p.tweak(claims)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600,
		"id_token": p.sign(claims)})
}

// sign is claims as a JWT signed with RS256 by the signer (Set), else the provider's key.
// The caller holds p.mu.
func (p *Provider) sign(claims map[string]any) string {
	b64 := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	in := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(in))
	key := p.key
	if p.signer != nil {
		key = p.signer
	}
	sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	return in + "." + b64(sig)
}

// Set changes the ID tokens signed from now on: tweak edits their claims (nil: none), and
// signer signs them (nil: the provider's own key, the one its discovery serves).
func (p *Provider) Set(tweak func(claims map[string]any), signer *rsa.PrivateKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tweak, p.signer = tweak, signer
}

// SetGroups sets the groups claim of the ID tokens signed from now on (none: an empty list).
func (p *Provider) SetGroups(groups ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.groups = append([]string{}, groups...)
}

// Key is the key the provider signs with, the one its discovery serves: another provider's
// Set signs with it to pass off this issuer's tokens.
func (p *Provider) Key() *rsa.PrivateKey { return p.key }

// Nonces are the nonces the authorization endpoint was asked for, in order.
func (p *Provider) Nonces() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.nonces)
}
