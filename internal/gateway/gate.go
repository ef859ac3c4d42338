package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/console"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/usage"
)

// gateFromConfig builds the gate and the health store: in Redis when redis is set, in
// memory otherwise (rs is then nil). Auth is on when keys or an admin token are configured
// (DESIGN §6).
func gateFromConfig(c *config.Config, log *slog.Logger) (g server.Gate, health fallback.Health, rs *redisstore.Store, err error) {
	g = server.Gate{Window: time.Minute, AdminToken: c.Auth.AdminToken}
	var (
		store auth.Store     = &auth.Memory{}
		teams auth.TeamStore = &auth.TeamMemory{}
		lim   limit.Limiter  = &limit.Memory{}
	)
	health = &fallback.Memory{}
	if c.Redis.Enabled() {
		rs, err = redisstore.New(redisOptions(c.Redis, log))
		if err != nil {
			return g, nil, nil, err
		}
		store, teams, lim, health = rs.Keys(), rs.Teams(), rs.Limiter(), rs.Health()
		g.Shared, g.FailOpen, g.Closer = rs, rs.FailOpen(), rs
	}
	g.Limiter = lim
	if c.AuthEnabled() {
		g.Keys = auth.NewKeys(staticKeys(c.Keys), store)
		g.Teams = auth.NewTeams(staticTeams(c.Teams), teams)
	}
	if c.Auth.AdminToken != "" {
		// Users and their personal tokens exist beside the admin token, the bootstrap admin.
		g.Users = &auth.UserMemory{}
		if rs != nil {
			g.Users = rs.Users()
		}
	}
	return g, health, rs, nil
}

// consoleFromConfig builds the console (nil: none) over the gate's users, and puts in their
// place the same store ending the console's sessions of a user deleted or whose role
// changed (endingUsers). signedIn records in the audit log what an OpenID Connect sign-in
// made or changed of a user, so the console is built once the audit log's store is open.
func consoleFromConfig(c *config.Config, users *auth.Users, rs *redisstore.Store, signedIn recordSignIn, th *auth.Throttle) *console.Console {
	switch {
	case c.Auth.AdminToken != "":
		// The console signs in with the admin token, a user's personal token or OpenID
		// Connect; its sessions live in Redis when there is one, so any replica serves them
		// and a sign-out ends them everywhere. A user's session is checked against the users'
		// store (shared by the replicas, never cached) at every call (issue 47).
		ending := &endingUsers{Users: *users}
		co := console.Options{Check: auth.NewToken(c.Auth.AdminToken).Matches, OIDC: oidcIssuers(c.Console.OIDC),
			Provision: provision(ending, signedIn), Personal: personal(*users), Current: current(*users),
			Throttle: signInThrottle(th)}
		if rs != nil {
			co.Store = rs.ConsoleSessions()
		}
		con := console.New(co)
		ending.end, *users = con.EndUser, ending
		return con
	case !c.AuthEnabled() && c.Logs.URL != "" && c.LoopbackOnly():
		// Auth is off on loopback (make run): the gateway is open to this machine and to it
		// only, so its console is too, to show the request log: it signs in with no token (a
		// session still carries its CSRF token). The key routes stay off: there are no keys.
		return console.New(console.Options{Open: true})
	}
	return nil
}

// endingUsers is the users' store of a gateway with a console: deleting a user, or changing
// their role (through the admin API, or an OpenID Connect sign-in that maps them anew), ends
// their console sessions through the session store's index of them, on every replica at
// once (issue 47). The console also checks every session against its user at each call
// (current), so a session this misses (the session store failed here) is refused all the
// same: ending is best effort, and the change stands.
type endingUsers struct {
	auth.Users
	end func(ctx context.Context, user string) error // set once the console is built
}

var _ auth.Users = (*endingUsers)(nil)

func (e *endingUsers) UpdateUser(ctx context.Context, id string, fn func(*auth.User) error) (*auth.User, error) {
	var role auth.Role
	u, err := e.Users.UpdateUser(ctx, id, func(u *auth.User) error {
		role = u.Role // the store may call fn again (a concurrent change): the last call's
		return fn(u)
	})
	if err == nil && u.Role != role {
		_ = e.end(ctx, id)
	}
	return u, err
}

func (e *endingUsers) DeleteUser(ctx context.Context, id string) error {
	err := e.Users.DeleteUser(ctx, id)
	if err == nil {
		_ = e.end(ctx, id)
	}
	return err
}

// throttleFromConfig is the throttle of failed tokens on the admin API and the console's
// sign-in (issue 47), nil when the admin API is off: its logs in Redis when there is one
// (shared by the replicas; redis.on_failure: open counts on this replica alone while Redis
// is down, closed refuses), in memory otherwise; each failure in the audit log (record).
func throttleFromConfig(c *config.Config, rs *redisstore.Store, record func(context.Context, auth.Failure)) *auth.Throttle {
	if c.Auth.AdminToken == "" {
		return nil
	}
	o := auth.ThrottleOptions{Secret: c.Auth.AdminToken, Record: record, Proxies: c.Auth.Proxies()}
	if rs != nil {
		o.Limiter = rs.Limiter() // its own local logs for an outage: not the keys'
	}
	return auth.NewThrottle(o)
}

// signInThrottle is th as the console's sign-in asks it (nil: none).
func signInThrottle(th *auth.Throttle) console.Throttle {
	if th == nil {
		return nil
	}
	return func(r *http.Request, token string) (time.Duration, func(bool), error) {
		a, err := th.Try(r, auth.SurfaceConsole, token)
		if te := (*auth.ThrottledError)(nil); errors.As(err, &te) {
			return te.Wait, nil, nil
		} else if err != nil {
			return 0, nil, err
		}
		return 0, func(failed bool) {
			reason := ""
			if failed {
				reason = auth.ReasonInvalid
			}
			a.End(r.Context(), reason)
		}, nil
	}
}

// oidcIssuers are the console's OpenID Connect issuers of the file.
func oidcIssuers(os []config.OIDC) []console.OIDC {
	var out []console.OIDC
	for _, o := range os {
		ci := console.OIDC{Name: o.Name, Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			RedirectURL: o.RedirectURL, Scopes: o.Scopes, GroupsClaim: o.GroupsClaim, DefaultRole: o.DefaultRole,
			DefaultTeam: o.DefaultTeam}
		if ci.Scopes == nil {
			ci.Scopes = []string{"email", "profile", "groups"}
		}
		for _, m := range o.Roles {
			ci.Roles = append(ci.Roles, console.RoleMap{Group: m.Group, Role: m.Role, Team: m.Team})
		}
		out = append(out, ci)
	}
	return out
}

// recordSignIn records what the sign-in through the issuer named issuer made (before nil)
// or changed of a user (admin.API.SignedIn).
type recordSignIn func(ctx context.Context, issuer string, before, after *auth.User)

// provision makes the user an issuer signed in at their first sign-in (source oidc, an id
// derived from the issuer and subject: the same on every replica), and sets their role and
// teams from the issuer's groups at every sign-in after: the issuer is the authority. What it
// made or changed goes to the audit log through signedIn (issue 37), as a change of a user
// through the admin API does.
func provision(users auth.Users, signedIn recordSignIn) func(context.Context, console.Identity) (*console.Who, error) {
	return func(ctx context.Context, id console.Identity) (*console.Who, error) {
		uid := auth.OIDCUserID(id.Issuer, id.Subject)
		var before *auth.User // the user as stored, before set: nil when made here
		set := func(u *auth.User) error {
			before = u.Clone() // the store may call set again (a concurrent change): the last call's
			u.Email, u.Name, u.Role, u.Teams = id.Email, id.Name, auth.Role(id.Role), id.Teams
			return nil
		}
		u, err := users.UpdateUser(ctx, uid, set)
		if errors.Is(err, auth.ErrNoUser) {
			u = &auth.User{ID: uid, CreatedAt: time.Now().UTC().Truncate(time.Second), Source: auth.SourceOIDC}
			_ = set(u)
			before = nil
			if err = users.CreateUser(ctx, u); errors.Is(err, auth.ErrExists) { // another replica, at once
				u, err = users.UpdateUser(ctx, uid, set)
			}
		}
		if err != nil {
			return nil, err
		}
		if signedIn != nil {
			signedIn(ctx, id.Provider, before, u)
		}
		return &console.Who{User: u.ID, Role: string(u.Role), Teams: u.Teams}, nil
	}
}

// personal is whom a user's personal token signs in to the console as: the user, with the
// role and teams they have now, and the token's hash, for current. The admin token is not
// one (Check answers for it).
func personal(users auth.Users) func(context.Context, string) (*console.Who, error) {
	tokens := auth.NewAdmins("", users)
	return func(ctx context.Context, token string) (*console.Who, error) {
		p, err := tokens.Principal(ctx, token, time.Now())
		if auth.Refused(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &console.Who{User: p.User, Role: string(p.Role), Teams: p.Teams, Token: auth.Hash(token)}, nil
	}
}

// current is whom a user's console session acts for now (auth.SessionPrincipal): the user
// re-read from the users' store at every call, with their current role and teams; nil
// (the session ends) once they are deleted, their role changed, or the personal token the
// session was signed in with is revoked or expired.
func current(users auth.Users) func(context.Context, console.Who) (*console.Who, error) {
	return func(ctx context.Context, w console.Who) (*console.Who, error) {
		p, err := auth.SessionPrincipal(ctx, users, w.User, auth.Role(w.Role), w.Token, time.Now())
		if auth.Refused(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &console.Who{User: p.User, Role: string(p.Role), Teams: p.Teams, Token: w.Token}, nil
	}
}

// redisOptions is the redis section as the store takes it.
func redisOptions(r config.Redis, log *slog.Logger) redisstore.Options {
	o := redisstore.Options{URL: r.URL, FailOpen: r.OnFailure == "open", Timeout: r.Timeout.Std(), Spool: r.Spool, Log: log}
	if c := r.Cluster; c != nil {
		o.Cluster = &redisstore.Cluster{Addrs: c.Addrs, Username: c.Username, Password: c.Password, TLS: c.TLS}
	}
	if s := r.Sentinel; s != nil {
		o.Sentinel = &redisstore.Sentinel{Master: s.Master, Addrs: s.Addrs, Password: s.Password,
			SentinelPassword: s.SentinelPassword}
	}
	return o
}

// staticKeys are the keys of the file. Their ids derive from their hashes: stable across
// restarts and replicas (the limit logs are keyed by id), and never the key.
func staticKeys(ks []config.Key) []*auth.Key {
	out := make([]*auth.Key, len(ks))
	for i, k := range ks {
		out[i] = &auth.Key{ID: "cfg_" + k.Hash[:16], Name: k.Name, Hash: k.Hash, Models: k.Models,
			RPM: k.Limits.RPM, TPM: k.Limits.TPM, ExpiresAt: k.ExpiresAt.Time, Metadata: k.Metadata,
			DailyUSD: k.Budget.DailyUSD, MonthlyUSD: k.Budget.MonthlyUSD, Guardrails: k.Guardrails,
			ToolCallsPerMinute: k.Limits.ToolCallsPerMinute, Capture: k.Capture, Team: k.Team}
		if k.MCP != nil {
			out[i].MCP = &auth.MCPAccess{Servers: k.MCP.Servers, Tools: k.MCP.Tools}
		}
	}
	return out
}

// staticTeams are the teams of the file.
func staticTeams(ts []config.Team) []*auth.Team {
	out := make([]*auth.Team, len(ts))
	for i, t := range ts {
		out[i] = &auth.Team{Name: t.Name, Models: t.Models, RPM: t.Limits.RPM, TPM: t.Limits.TPM,
			DailyUSD: t.Budget.DailyUSD, MonthlyUSD: t.Budget.MonthlyUSD}
		if t.MCP != nil {
			out[i].MCP = &auth.MCPAccess{Servers: t.MCP.Servers, Tools: t.MCP.Tools}
		}
	}
	return out
}

// usageFromConfig builds the account: in Redis when the gate has it, in memory otherwise.
func usageFromConfig(c *config.Config, rs *redisstore.Store) server.Usage {
	over := map[string]usage.Price{}
	for name, p := range c.Prices {
		pr := usage.Price{Input: p.Input, Output: p.Output, CachedInput: p.Input, CacheWrite: p.Input, Unit: p.Unit, Batch: p.Batch}
		if p.CachedInput != nil {
			pr.CachedInput = *p.CachedInput
		}
		if p.CacheWrite != nil {
			pr.CacheWrite = *p.CacheWrite
		}
		pr.CacheWrite1h = pr.CacheWrite // absent: the 5-minute write's price
		if p.CacheWrite1h != nil {
			pr.CacheWrite1h = *p.CacheWrite1h
		}
		over[name] = pr
	}
	u := server.Usage{Prices: usage.NewPrices(over), Store: &usage.Memory{}, Budgets: &usage.MemoryBudgets{}}
	if rs != nil {
		u.Store, u.Budgets = rs.Usage(), rs.Budgets()
	}
	return u
}
