package admin

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

// Keys is the key management of the admin API (/admin/keys) over a key store. Each method
// serves one route from the path's id and the request's body, and returns the status and
// the answer to encode, or an error of the kinds the edge answers (StoreError). Safe for
// concurrent use.
type Keys struct {
	Store *auth.Keys
	// Teams are the teams a key may join; nil: none exists, a key naming one is refused.
	Teams *auth.Teams
	// Guardrail reports whether a guardrail name is configured: a key may attach only those.
	Guardrail func(name string) bool
}

// Create serves POST /admin/keys: a new key of the body's fields, whose secret only this
// answer shows.
func (ks Keys) Create(ctx context.Context, _ string, body []byte) (int, any, error) {
	in, err := DecodeKey(body)
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	secret := auth.NewSecret()
	k := &auth.Key{ID: auth.NewID(), Hash: auth.Hash(secret), Models: []string{"*"}, CreatedAt: now.UTC().Truncate(time.Second)}
	if err := ks.apply(ctx, in, k, now); err != nil {
		return 0, nil, err
	}
	if err := ks.Store.Create(ctx, k); err != nil {
		return 0, nil, StoreError(err)
	}
	w := Encode(k)
	w.Secret = secret
	return http.StatusCreated, w, nil
}

// List serves GET /admin/keys.
func (ks Keys) List(ctx context.Context, _ string, _ []byte) (int, any, error) {
	list, err := ks.Store.List(ctx)
	if err != nil {
		return 0, nil, StoreError(err)
	}
	data := make([]Key, len(list))
	for i, k := range list {
		data[i] = Encode(k)
	}
	return http.StatusOK, map[string]any{"object": "list", "data": data}, nil
}

// Get serves GET /admin/keys/{id}.
func (ks Keys) Get(ctx context.Context, id string, _ []byte) (int, any, error) {
	k, err := ks.Store.Get(ctx, id)
	if err != nil {
		return 0, nil, StoreError(err)
	}
	return http.StatusOK, Encode(k), nil
}

// Patch serves PATCH /admin/keys/{id}: the body's fields change, the others stay.
func (ks Keys) Patch(ctx context.Context, id string, body []byte) (int, any, error) {
	in, err := DecodeKey(body)
	if err != nil {
		return 0, nil, err
	}
	now := time.Now()
	k, err := ks.Store.Update(ctx, id, func(k *auth.Key) error { return ks.apply(ctx, in, k, now) })
	if err != nil {
		return 0, nil, StoreError(err)
	}
	return http.StatusOK, Encode(k), nil
}

// Delete serves DELETE /admin/keys/{id}.
func (ks Keys) Delete(ctx context.Context, id string, _ []byte) (int, any, error) {
	if err := ks.Store.Delete(ctx, id); err != nil {
		return 0, nil, StoreError(err)
	}
	return http.StatusOK, map[string]any{"id": id, "object": "key.deleted", "deleted": true}, nil
}

// apply sets in's fields on k, whose guardrails must be configured ones.
func (ks Keys) apply(ctx context.Context, in *KeyInput, k *auth.Key, now time.Time) error {
	if err := in.Apply(k, now); err != nil {
		return err
	}
	for _, name := range k.Guardrails {
		if ks.Guardrail == nil || !ks.Guardrail(name) {
			return Bad("guardrails", "guardrails names '"+name+"', which is not a configured guardrail.")
		}
	}
	if in.Team != nil && k.Team != "" {
		return ks.teamExists(ctx, k.Team)
	}
	return nil
}

// teamExists is nil when team exists: a key may join only a team there is (400 otherwise).
func (ks Keys) teamExists(ctx context.Context, team string) error {
	bad := Bad("team", "team names '"+team+"', which is not a team.")
	if ks.Teams == nil || !auth.ValidTeamName(team) {
		return bad
	}
	if _, err := ks.Teams.Get(ctx, team); errors.Is(err, auth.ErrNoTeam) {
		return bad
	} else if err != nil {
		return TeamStoreError(err)
	}
	return nil
}
