package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/auth"
)

// teamsByName holds every API-made team's record, by name: one hash, one hash tag, so
// each script below touches one slot (Redis Cluster).
const teamsByName = "sluice:{teams}:by-name"

// Teams is an auth.TeamStore in Redis with a short local cache in front of Lookup, which every
// request of a key with a team asks. A team changed on one replica is seen by the others
// within CacheTTL; under redis.on_failure: open, a team this replica read within StaleTTL
// still answers while Redis is down (its limits then fall back to this replica's, as the
// keys' do).
type Teams struct {
	s        *Store
	CacheTTL time.Duration // default 2s
	StaleTTL time.Duration // default 10m

	mu    sync.Mutex
	cache map[string]cachedTeam
}

type cachedTeam struct {
	t  *auth.Team
	at time.Time
}

var _ auth.TeamStore = (*Teams)(nil)

// Teams returns the team store.
func (s *Store) Teams() *Teams {
	return &Teams{s: s, CacheTTL: 2 * time.Second, StaleTTL: 10 * time.Minute, cache: map[string]cachedTeam{}}
}

func (ts *Teams) remember(name string, t *auth.Team) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t == nil {
		delete(ts.cache, name)
		return
	}
	if len(ts.cache) >= maxCached {
		clear(ts.cache)
	}
	ts.cache[name] = cachedTeam{t: t, at: time.Now()}
}

// createTeamScript stores a record under its name unless it is taken.
// KEYS: by-name. ARGV: name, record. Returns 1, or 0 when taken.
var createTeamScript = redis.NewScript(`return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])`)

// updateTeamScript replaces a record if it is still the one read (compare and set).
// KEYS: by-name. ARGV: name, old record, new record.
// Returns 1, 0 when it changed meanwhile, -1 when the name is gone.
var updateTeamScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return -1 end
if cur ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`)

func decodeTeam(rec string) (*auth.Team, error) {
	t := &auth.Team{}
	if err := json.Unmarshal([]byte(rec), t); err != nil {
		return nil, fmt.Errorf("redisstore: a team record does not decode: %w", err)
	}
	return t, nil
}

// get returns the record of name as stored, and decoded.
func (ts *Teams) get(ctx context.Context, name string) (string, *auth.Team, error) {
	var rec string
	err := ts.s.call(ctx, func(ctx context.Context) (err error) {
		rec, err = ts.s.c.HGet(ctx, teamsByName, name).Result()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return "", nil, auth.ErrNoTeam
	} else if err != nil {
		return "", nil, err
	}
	t, err := decodeTeam(rec)
	return rec, t, err
}

// Get implements auth.TeamStore: what Redis holds now.
func (ts *Teams) Get(ctx context.Context, name string) (*auth.Team, error) {
	_, t, err := ts.get(ctx, name)
	return t, err
}

// Lookup implements auth.TeamStore.
func (ts *Teams) Lookup(ctx context.Context, name string) (*auth.Team, error) {
	ts.mu.Lock()
	c, ok := ts.cache[name]
	ts.mu.Unlock()
	if ok && time.Since(c.at) < ts.CacheTTL && (ts.s.open || !ts.s.isDown()) {
		return c.t, nil
	}
	_, t, err := ts.get(ctx, name)
	switch {
	case errors.Is(err, auth.ErrNoTeam):
		ts.remember(name, nil)
		return nil, err
	case err != nil:
		if ts.s.open && ok && time.Since(c.at) < ts.StaleTTL && errors.Is(err, ErrUnavailable) {
			return c.t, nil
		}
		return nil, err
	}
	ts.remember(name, t)
	return t, nil
}

// Create implements auth.TeamStore.
func (ts *Teams) Create(ctx context.Context, t *auth.Team) error {
	rec, err := json.Marshal(t)
	if err != nil {
		return err
	}
	var n int64
	err = ts.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = createTeamScript.Run(ctx, ts.s.c, []string{teamsByName}, t.Name, rec).Int64()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return auth.ErrTeamExists
	}
	return nil
}

// List implements auth.TeamStore.
func (ts *Teams) List(ctx context.Context) ([]*auth.Team, error) {
	out, err := records(ctx, ts.s, teamsByName, decodeTeam)
	auth.SortTeams(out)
	return out, err
}

// Update implements auth.TeamStore: read, apply fn, write if nobody wrote meanwhile, else
// again (casUpdate, as Keys.Update). The name and creation time stay as they were.
func (ts *Teams) Update(ctx context.Context, name string, fn func(*auth.Team) error) (*auth.Team, error) {
	t, err := casUpdate(ctx, ts.s, updateTeamScript, []string{teamsByName}, name, ts.get, func(t *auth.Team) error {
		created := t.CreatedAt
		if err := fn(t); err != nil {
			return err
		}
		t.Name, t.CreatedAt = name, created
		return nil
	}, auth.ErrNoTeam, "team")
	if err != nil {
		return nil, err
	}
	ts.remember(name, nil)
	return t, nil
}

// Delete implements auth.TeamStore. The team's limit logs and budget counters expire on
// their own.
func (ts *Teams) Delete(ctx context.Context, name string) error {
	var n int64
	err := ts.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = ts.s.c.HDel(ctx, teamsByName, name).Result()
		return err
	})
	if err != nil {
		return err
	}
	ts.remember(name, nil)
	if n == 0 {
		return auth.ErrNoTeam
	}
	return nil
}
