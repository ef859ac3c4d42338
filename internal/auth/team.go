package auth

import (
	"context"
	"errors"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Team is a team as stored (issue 37): the keys that name it pass its model access, rate
// limits and budget as well as their own. A team is known by its name, which never changes:
// keys, the request log, the account and the roles name it. A *Team handed out by a
// TeamStore or Teams is shared: callers must not modify it.
type Team struct {
	Name string `json:"name"`
	// Models are what the team's keys may call (as Key.Models); a key's own list must allow
	// the model too. "*": all.
	Models []string `json:"models"`
	// MCP is what the team's keys may use of the MCP gateway, on top of their own; nil:
	// no restriction of the team's.
	MCP *MCPAccess `json:"mcp,omitempty"`
	// RPM and TPM are the requests and tokens per minute of all the team's keys together; 0:
	// unlimited.
	RPM int64 `json:"rpm"`
	TPM int64 `json:"tpm"`
	// DailyUSD and MonthlyUSD cap the team's spending per UTC day and month; 0: no cap.
	DailyUSD   float64   `json:"daily_usd,omitempty"`
	MonthlyUSD float64   `json:"monthly_usd,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// Static is set on teams of the configuration file: the admin API cannot change them.
	Static bool `json:"-"`
}

// Allows reports whether the team's keys may call model (the rules of Key.Allows).
func (t *Team) Allows(model string) bool { return (&Key{Models: t.Models}).Allows(model) }

// Scope is the name of the team's rate limit logs and budget counters: it cannot be a key's
// id ("key_…", "cfg_…"), so a team and a key never share one.
func (t *Team) Scope() string { return "team:" + t.Name }

// Clone returns a deep copy of t.
func (t *Team) Clone() *Team {
	c := *t
	c.Models = slices.Clone(t.Models)
	if t.MCP != nil {
		c.MCP = &MCPAccess{Servers: slices.Clone(t.MCP.Servers), Tools: slices.Clone(t.MCP.Tools)}
	}
	return &c
}

// AllowsMCP reports whether the team lets its keys use tool (server__tool) of server: no
// MCP access of the team's means no restriction; otherwise the rules of a key's MCP access.
func (t *Team) AllowsMCP(server, tool string) bool {
	m := t.MCP
	if m == nil {
		return true
	}
	if len(m.Servers) > 0 && !slices.Contains(m.Servers, "*") && !slices.Contains(m.Servers, server) {
		return false
	}
	if len(m.Servers) == 0 && len(m.Tools) == 0 {
		return false
	}
	return len(m.Tools) == 0 || slices.ContainsFunc(m.Tools, func(p string) bool { ok, _ := path.Match(p, tool); return ok })
}

// teamName is what a team may be called: a slug, safe in a URL path, a Redis key and a
// log filter.
var teamName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidTeamName reports whether name may name a team: 1 to 64 of a-z, 0-9, '.', '_' and
// '-', starting with a letter or digit.
func ValidTeamName(name string) bool { return teamName.MatchString(name) }

// Errors of a TeamStore and of Teams. Any other error means the store could not answer.
var (
	ErrNoTeam     = errors.New("no such team")
	ErrTeamExists = errors.New("a team with this name exists")
	// ErrTeamStatic is returned for changes to a team of the configuration file.
	ErrTeamStatic = errors.New("the team is defined in the configuration file")
	// ErrTeamInUse is returned for the deletion of a team that keys still name.
	ErrTeamInUse = errors.New("keys still belong to the team")
)

// TeamStore holds the teams the admin API creates. Implementations are safe for concurrent
// use, and return copies or shared read-only values (see Team).
type TeamStore interface {
	// Lookup finds a team by name on the path of every request of a key with a team; it may
	// answer from a cache a few seconds old (as a key's Lookup).
	Lookup(ctx context.Context, name string) (*Team, error)
	// Get reads a team by name from the store itself (the admin API).
	Get(ctx context.Context, name string) (*Team, error)
	// Create stores t; ErrTeamExists when its name is taken.
	Create(ctx context.Context, t *Team) error
	// List returns every team, ordered by name.
	List(ctx context.Context) ([]*Team, error)
	// Update applies fn to a copy of the team and stores the result atomically (no lost
	// update between replicas); an error from fn is returned as is. The name and creation
	// time cannot change.
	Update(ctx context.Context, name string, fn func(*Team) error) (*Team, error)
	Delete(ctx context.Context, name string) error
}

// TeamMemory is a TeamStore kept in this process: one replica, no Redis. The zero value is
// ready.
type TeamMemory struct {
	mu     sync.Mutex
	byName map[string]*Team
}

var _ TeamStore = (*TeamMemory)(nil)

func (m *TeamMemory) Lookup(ctx context.Context, name string) (*Team, error) { return m.Get(ctx, name) }

func (m *TeamMemory) Get(_ context.Context, name string) (*Team, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.byName[name]; t != nil {
		return t, nil
	}
	return nil, ErrNoTeam
}

func (m *TeamMemory) Create(_ context.Context, t *Team) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byName == nil {
		m.byName = map[string]*Team{}
	}
	if m.byName[t.Name] != nil {
		return ErrTeamExists
	}
	m.byName[t.Name] = t.Clone()
	return nil
}

func (m *TeamMemory) List(context.Context) ([]*Team, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := make([]*Team, 0, len(m.byName))
	for _, t := range m.byName {
		ts = append(ts, t)
	}
	SortTeams(ts)
	return ts, nil
}

func (m *TeamMemory) Update(_ context.Context, name string, fn func(*Team) error) (*Team, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.byName[name]
	if old == nil {
		return nil, ErrNoTeam
	}
	t := old.Clone()
	if err := fn(t); err != nil {
		return nil, err
	}
	t.Name, t.CreatedAt = old.Name, old.CreatedAt
	m.byName[name] = t // replace rather than modify: readers may hold the old value
	return t, nil
}

func (m *TeamMemory) Delete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byName[name] == nil {
		return ErrNoTeam
	}
	delete(m.byName, name)
	return nil
}

// SortTeams orders teams by name: the order List returns.
func SortTeams(ts []*Team) {
	slices.SortFunc(ts, func(a, b *Team) int { return strings.Compare(a.Name, b.Name) })
}

// Teams resolves a team: the configuration file's first (static, never in the store), then
// the store's. Safe for concurrent use; read-only once built.
type Teams struct {
	static map[string]*Team
	order  []*Team
	store  TeamStore
}

// NewTeams returns Teams over the file's teams (marked Static) and store.
func NewTeams(static []*Team, store TeamStore) *Teams {
	ts := &Teams{static: map[string]*Team{}, store: store}
	for _, t := range static {
		t = t.Clone()
		t.Static = true
		ts.static[t.Name] = t
		ts.order = append(ts.order, t)
	}
	return ts
}

// Get returns the team of this name, from the file or the store; ErrNoTeam when neither
// has it.
func (ts *Teams) Get(ctx context.Context, name string) (*Team, error) {
	if t := ts.static[name]; t != nil {
		return t, nil
	}
	return ts.store.Get(ctx, name)
}

// Lookup is Get for the request path: the store may answer from its cache.
func (ts *Teams) Lookup(ctx context.Context, name string) (*Team, error) {
	if t := ts.static[name]; t != nil {
		return t, nil
	}
	return ts.store.Lookup(ctx, name)
}

// List returns the file's teams, in file order, then the store's.
func (ts *Teams) List(ctx context.Context) ([]*Team, error) {
	stored, err := ts.store.List(ctx)
	if err != nil {
		return nil, err
	}
	return append(append([]*Team(nil), ts.order...), stored...), nil
}

// Create stores a new team; ErrTeamExists when the file has one of its name.
func (ts *Teams) Create(ctx context.Context, t *Team) error {
	if ts.static[t.Name] != nil {
		return ErrTeamExists
	}
	return ts.store.Create(ctx, t)
}

// Update changes a stored team; ErrTeamStatic for a team of the file.
func (ts *Teams) Update(ctx context.Context, name string, fn func(*Team) error) (*Team, error) {
	if ts.static[name] != nil {
		return nil, ErrTeamStatic
	}
	return ts.store.Update(ctx, name, fn)
}

// Delete removes a stored team unless keys still name it (ErrTeamInUse); ErrTeamStatic for
// a team of the file. Keys and teams live apart (in Redis, in different hash slots), so a
// key created in the same instant as the deletion may still name the team: its requests
// are then refused (no such team) until it is moved, never let through unchecked.
func (ts *Teams) Delete(ctx context.Context, name string, keys *Keys) error {
	if ts.static[name] != nil {
		return ErrTeamStatic
	}
	if _, err := ts.store.Get(ctx, name); err != nil {
		return err
	}
	if keys != nil {
		members, err := keys.OfTeam(ctx, name)
		if err != nil {
			return err
		}
		if len(members) > 0 {
			return ErrTeamInUse
		}
	}
	return ts.store.Delete(ctx, name)
}

// OfTeam returns the keys of team, from the file and the store, in List's order.
func (ks *Keys) OfTeam(ctx context.Context, team string) ([]*Key, error) {
	all, err := ks.List(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(k *Key) bool { return k.Team != team }), nil
}
