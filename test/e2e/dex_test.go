package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
)

// dexConfig is Dex's own configuration: the password DB with two static users, ann in the
// group search and bob in none (groups on static users: Dex v2.45.0, PR #4456), the gateway as
// its one static client, no approval screen (docs/sign-in.md's worked example, with ports).
const dexConfig = `issuer: %[1]s
storage: {type: memory}
web: {http: %[2]s}
enablePasswordDB: true
oauth2: {skipApprovalScreen: true}
staticClients:
  - {id: sluice, secret: %[3]s, name: Sluice, redirectURIs: [%[4]q]}
staticPasswords:
  - {email: ann@example.com, hash: %[5]q, username: ann, userID: 08a8684b-db88-4b73-90a9-3cd1661f5466, groups: [search]}
  - {email: bob@example.com, hash: %[6]q, username: bob, userID: 5b0f3d1e-6c2a-4b8e-9f41-2d7c8a9e0b13}
`

// gatewayConfig is the gateway's: the admin token and Dex as the console's issuer, whose
// group search maps to team_admin of the team search, and whose users in no mapped group sign
// in as members of the team dex-users: a member's key must belong to one of their teams
// (issue 37), so without default_team they could make none.
const gatewayConfig = `auth:
  admin_token: ${SLUICE_ADMIN_TOKEN}
teams:
  - {name: search, budget: {daily_usd: 5}}
  - {name: dex-users, budget: {daily_usd: 5}}
console:
  oidc:
    - name: dex
      issuer: ${DEX_ISSUER}
      client_id: sluice
      client_secret: ${DEX_CLIENT_SECRET}
      redirect_url: ${SLUICE_CALLBACK}
      roles:
        - {group: search, role: team_admin, team: search}
      default_role: member
      default_team: dex-users
`

// TestConsoleDex signs in to the console through a real OpenID provider: Dex (bin/dex, built
// by make dex from tools/dex) with its password DB, the gateway's console.oidc pointing at it,
// Chromium filling Dex's own login form (dex.test.mjs). Dex sends ann's group in the ID token's
// groups claim, and roles maps it: her session is a team_admin's of search, who makes keys in
// that team and in no other, nor outside teams. bob has no group: default_role and
// default_team make him a member of dex-users. Without the Dex binary the test is skipped,
// and fails in CI (.ci/run builds it).
func TestConsoleDex(t *testing.T) {
	dex := os.Getenv("SLUICE_DEX")
	if dex == "" {
		dex, _ = filepath.Abs(filepath.Join("..", "..", "bin", "dex"))
	}
	if _, err := os.Stat(dex); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bin/dex is missing; .ci/run builds it (make dex)")
		}
		t.Skip("bin/dex is missing (make dex)")
	}
	bin := node(t)
	needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The gateway's listener first: Dex's client names its callback URL.
	var h http.Handler = http.NotFoundHandler()
	gw := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	callback := "http://" + gw.Listener.Addr().String() + "/console/oidc/dex/callback"
	issuer, secret := startDex(ctx, t, dex, callback)

	const admin = "console-dex-admin-e2e"
	env := map[string]string{"SLUICE_ADMIN_TOKEN": admin, "DEX_ISSUER": issuer, "DEX_CLIENT_SECRET": secret,
		"SLUICE_CALLBACK": callback}
	cfg, err := config.ParseWith([]byte(gatewayConfig), "sluice.yaml", func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	h = srv
	gw.Start()
	defer srv.Close()
	defer gw.Close()

	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "dex.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw.URL, "SLUICE_ADMIN="+admin, "DEX_ISSUER="+issuer,
		"CHROMIUM="+chromiumPath, "NODE_NO_WARNINGS=1")
	cmd.WaitDelay = 10 * time.Second // Chromium left running must not hold the test
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the sign-in through Dex failed: %v", err)
	}
}

// startDex runs Dex on a free loopback port until the test ends and returns its issuer and
// its client's secret once its discovery document answers.
func startDex(ctx context.Context, t *testing.T, dex, callback string) (issuer, secret string) {
	t.Helper()
	var hashes [2][]byte
	for i, password := range []string{"ann-password", "bob-password"} {
		h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			t.Fatal(err)
		}
		hashes[i] = h
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // Dex binds it itself; a loss of the race shows as Dex exiting below
	issuer, secret = "http://"+addr+"/dex", "dex-client-secret-e2e"
	file := filepath.Join(t.TempDir(), "dex.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, dexConfig, issuer, addr, secret, callback, hashes[0], hashes[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	cmd := exec.CommandContext(ctx, dex, "serve", file)
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("dex:\n%s", log.String())
		}
	})
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("dex exited: %v", err)
		case <-ctx.Done():
			t.Fatal("dex did not answer within the test's time")
		case <-time.After(50 * time.Millisecond):
		}
		r, err := http.Get(issuer + "/.well-known/openid-configuration")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return issuer, secret
			}
		}
	}
}
