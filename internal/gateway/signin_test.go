package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/console/oidctest"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/logstore"
)

// signInConfig is a gateway whose console signs in with the provider at ${ISSUER}: its
// search-admins are search's team_admins, its ads-viewers ads' viewers.
const signInConfig = `auth: {admin_token: signin-admin}
teams: [{name: search}, {name: ads}]
console:
  oidc:
    - name: test
      issuer: ${ISSUER}
      client_id: sluice
      client_secret: signin-client-secret
      redirect_url: ${CALLBACK}
      roles:
        - {group: search-admins, role: team_admin, team: search}
        - {group: ads-viewers, role: viewer, team: ads}
`

// oidcSignIn signs in a new browser to the console at url through the issuer "test"; the
// browser, holding the session's cookie.
func oidcSignIn(t *testing.T, url string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	res, err := b.Get(url + "/console/oidc/test/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Request.URL.Path != "/console/" {
		t.Fatalf("landed on %s (%d): %s; want /console/", res.Request.URL, res.StatusCode, body)
	}
	return b
}

// TestSignInAudited: a user the console's OpenID Connect sign-in makes, or whose role and
// teams it changes, is in the audit log (GET /admin/audit), by system:oidc, with the user
// before and after; a sign-in that changes nothing adds no entry (issue 37).
func TestSignInAudited(t *testing.T) {
	p := oidctest.New(t)
	gw := httptest.NewUnstartedServer(nil) // its address first: the config names its callback
	gw.Config.Handler = build(t, signInConfig, map[string]string{"ISSUER": p.URL,
		"CALLBACK": "http://" + gw.Listener.Addr().String() + "/console/oidc/test/callback"}, io.Discard)
	gw.Start()
	t.Cleanup(gw.Close)

	signIn := func() { oidcSignIn(t, gw.URL) }
	audit := func() ([]logstore.AuditEntry, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", gw.URL+"/admin/audit?resource_kind=user&user=system:oidc", nil)
		req.Header.Set("Authorization", "Bearer signin-admin")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var page struct {
			Data []logstore.AuditEntry `json:"data"`
		}
		if res.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
			t.Fatalf("GET /admin/audit: %d %s", res.StatusCode, b)
		}
		return page.Data, string(b)
	}
	type user struct {
		ID, Role, Source string
		Teams            []string
	}
	val := func(raw json.RawMessage) *user {
		var u *user
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	signIn() // the first sign-in makes the user
	es, body := audit()
	if len(es) != 1 {
		t.Fatalf("got %d entries, want 1 (the user made): %s", len(es), body)
	}
	made := es[0]
	if u := val(made.After); made.User != admin.OIDCActor || made.Role != "" || made.Action != "GET /console/oidc/test/callback" ||
		made.Status != 201 || string(made.Before) != "null" || u == nil || u.ID != made.ResourceID ||
		!strings.HasPrefix(u.ID, "usr_") || u.Role != "team_admin" || strings.Join(u.Teams, ",") != "search" || u.Source != "oidc" {
		t.Errorf("creation: %+v (after %s)", made, made.After)
	}

	signIn() // the same groups: nothing changed, nothing recorded
	if es, body := audit(); len(es) != 1 {
		t.Fatalf("got %d entries after a sign-in that changed nothing, want 1: %s", len(es), body)
	}

	p.SetGroups("ads-viewers") // the issuer moved ann: viewer of ads
	signIn()
	es, body = audit()
	if len(es) != 2 {
		t.Fatalf("got %d entries, want 2 (made, then changed): %s", len(es), body)
	}
	changed := es[0] // newest first
	if b, a := val(changed.Before), val(changed.After); changed.User != admin.OIDCActor || changed.Status != 200 ||
		changed.ResourceID != made.ResourceID || b == nil || a == nil || b.Role != "team_admin" || a.Role != "viewer" ||
		strings.Join(b.Teams, ",") != "search" || strings.Join(a.Teams, ",") != "ads" {
		t.Errorf("change: %+v (before %s, after %s)", changed, changed.Before, changed.After)
	}
	if strings.Contains(body, "signin-client-secret") || strings.Contains(body, "signin-admin") {
		t.Errorf("a secret in the audit log: %s", body)
	}
}

// An OpenID Connect session is checked against the user it maps to at every call, as a
// personal token's is (issue 47): the issuer moving the user to another role ends their
// older sessions at their next sign-in, and deleting the user ends the last one at once.
func TestOIDCSessionEndsWithUser(t *testing.T) {
	p := oidctest.New(t)
	gw := httptest.NewUnstartedServer(nil)
	gw.Config.Handler = build(t, signInConfig, map[string]string{"ISSUER": p.URL,
		"CALLBACK": "http://" + gw.Listener.Addr().String() + "/console/oidc/test/callback"}, io.Discard)
	gw.Start()
	t.Cleanup(gw.Close)
	get := func(b *http.Client, path string) (int, string) {
		t.Helper()
		res, err := b.Get(gw.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	var who struct {
		SignedIn bool `json:"signed_in"`
		Who      struct {
			User, Role string
			Teams      []string
		}
	}

	p.SetGroups("search-admins")
	first := oidcSignIn(t, gw.URL)
	if status, body := get(first, "/admin/keys"); status != 200 {
		t.Fatalf("the session lists keys: got %d %s, want 200", status, body)
	}
	p.SetGroups("ads-viewers") // the issuer moves ann: viewer of ads
	second := oidcSignIn(t, gw.URL)
	if status, _ := get(first, "/admin/keys"); status != 401 {
		t.Errorf("the session of the old role: got %d, want 401", status)
	}
	_, body := get(second, "/console/session")
	if json.Unmarshal([]byte(body), &who) != nil || !who.SignedIn || who.Who.Role != "viewer" || strings.Join(who.Who.Teams, ",") != "ads" {
		t.Fatalf("the new session: got %s, want ann as a viewer of ads", body)
	}

	req, _ := http.NewRequest("DELETE", gw.URL+"/admin/users/"+who.Who.User, nil)
	req.Header.Set("Authorization", "Bearer signin-admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("DELETE /admin/users: got %d", res.StatusCode)
	}
	if status, _ := get(second, "/admin/keys"); status != 401 {
		t.Errorf("the session of a deleted user: got %d, want 401", status)
	}
	if _, body := get(second, "/console/session"); strings.Contains(body, `"signed_in":true`) {
		t.Errorf("GET /console/session of a deleted user: got %s, want signed out", body)
	}
}
