package redisstore

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/auth"
)

// The users and their personal tokens share the {users} hash tag: one slot, so a change
// that reads and writes both (a user deleted with their tokens) is one transaction.
const (
	usersByID   = "sluice:{users}:by-id"  // id -> the user's JSON
	usersTokens = "sluice:{users}:tokens" // token hash -> the token's JSON (never the token)
)

// Users is an auth.Users in Redis, shared by the replicas: a user made or a token revoked
// on one is seen by all at their next call. There is no local fallback: while Redis is
// down, personal tokens and sign-ins fail (closed), the admin token still works. Safe for
// concurrent use.
type Users struct{ s *Store }

var _ auth.Users = (*Users)(nil)

// Users returns the users' store on this Store's connection.
func (s *Store) Users() *Users { return &Users{s: s} }

func (us *Users) CreateUser(ctx context.Context, u *auth.User) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	var added bool
	err = us.s.call(ctx, func(ctx context.Context) (err error) {
		added, err = us.s.c.HSetNX(ctx, usersByID, u.ID, b).Result()
		return err
	})
	if err == nil && !added {
		return auth.ErrExists
	}
	return err
}

func (us *Users) User(ctx context.Context, id string) (*auth.User, error) {
	var b []byte
	err := us.s.call(ctx, func(ctx context.Context) (err error) {
		b, err = us.s.c.HGet(ctx, usersByID, id).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, auth.ErrNoUser
	} else if err != nil {
		return nil, err
	}
	u := &auth.User{}
	return u, json.Unmarshal(b, u)
}

func (us *Users) ListUsers(ctx context.Context) ([]*auth.User, error) {
	var m map[string]string
	err := us.s.call(ctx, func(ctx context.Context) (err error) {
		m, err = us.s.c.HGetAll(ctx, usersByID).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]*auth.User, 0, len(m))
	for _, rec := range m {
		u := &auth.User{}
		if json.Unmarshal([]byte(rec), u) == nil {
			out = append(out, u)
		}
	}
	auth.SortUsers(out)
	return out, nil
}

// UpdateUser reads the user, applies fn outside Redis, and writes the result only if the
// stored user is still the one read (WATCH): a change another replica made in between makes
// it start over (no lost update).
func (us *Users) UpdateUser(ctx context.Context, id string, fn func(*auth.User) error) (*auth.User, error) {
	for range 64 {
		var old []byte
		err := us.s.call(ctx, func(ctx context.Context) (err error) {
			old, err = us.s.c.HGet(ctx, usersByID, id).Bytes()
			return err
		})
		if errors.Is(err, redis.Nil) {
			return nil, auth.ErrNoUser
		} else if err != nil {
			return nil, err
		}
		prev := &auth.User{}
		if err := json.Unmarshal(old, prev); err != nil {
			return nil, err
		}
		u := prev.Clone()
		if err := fn(u); err != nil {
			return nil, err
		}
		u.ID, u.Source, u.CreatedAt = prev.ID, prev.Source, prev.CreatedAt
		rec, err := json.Marshal(u)
		if err != nil {
			return nil, err
		}
		err = us.s.call(ctx, func(ctx context.Context) error {
			err := us.s.c.Watch(ctx, func(tx *redis.Tx) error {
				now, err := tx.HGet(ctx, usersByID, id).Bytes()
				if err != nil || string(now) != string(old) {
					return redis.TxFailedErr
				}
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { return p.HSet(ctx, usersByID, id, rec).Err() })
				return err
			}, usersByID)
			if errors.Is(err, redis.TxFailedErr) {
				return redis.Nil // an answer, not a failure: read again
			}
			return err
		})
		if err == nil {
			return u, nil
		} else if !errors.Is(err, redis.Nil) {
			return nil, err
		}
	}
	return nil, errors.New("the user changed too often to update")
}

// DeleteUser removes the user and their tokens in one transaction.
func (us *Users) DeleteUser(ctx context.Context, id string) error {
	ts, err := us.Tokens(ctx, id)
	if err != nil {
		return err
	}
	var n int64
	err = us.s.call(ctx, func(ctx context.Context) error {
		cmds, err := us.s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, usersByID, id)
			for _, t := range ts {
				p.HDel(ctx, usersTokens, t.Hash)
			}
			return nil
		})
		if err == nil {
			n = cmds[0].(*redis.IntCmd).Val()
		}
		return err
	})
	if err == nil && n == 0 {
		return auth.ErrNoUser
	}
	return err
}

func (us *Users) CreateToken(ctx context.Context, t *auth.UserToken) error {
	if _, err := us.User(ctx, t.User); err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	var added bool
	err = us.s.call(ctx, func(ctx context.Context) (err error) {
		added, err = us.s.c.HSetNX(ctx, usersTokens, t.Hash, b).Result()
		return err
	})
	if err == nil && !added {
		return auth.ErrExists
	}
	return err
}

// Tokens reads every token and keeps the user's: a fleet's users hold a few each.
func (us *Users) Tokens(ctx context.Context, user string) ([]*auth.UserToken, error) {
	var m map[string]string
	err := us.s.call(ctx, func(ctx context.Context) (err error) {
		m, err = us.s.c.HGetAll(ctx, usersTokens).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []*auth.UserToken
	for _, rec := range m {
		t := &auth.UserToken{}
		if json.Unmarshal([]byte(rec), t) == nil && t.User == user {
			out = append(out, t)
		}
	}
	auth.SortTokens(out)
	return out, nil
}

func (us *Users) DeleteToken(ctx context.Context, user, id string) error {
	ts, err := us.Tokens(ctx, user)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.ID == id {
			return us.s.call(ctx, func(ctx context.Context) error { return us.s.c.HDel(ctx, usersTokens, t.Hash).Err() })
		}
	}
	return auth.ErrNotFound
}

func (us *Users) TokenByHash(ctx context.Context, hash string) (*auth.UserToken, error) {
	var b []byte
	err := us.s.call(ctx, func(ctx context.Context) (err error) {
		b, err = us.s.c.HGet(ctx, usersTokens, hash).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, auth.ErrNotFound
	} else if err != nil {
		return nil, err
	}
	t := &auth.UserToken{}
	return t, json.Unmarshal(b, t)
}
