package admin

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
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
	if p := auth.PrincipalFrom(ctx); p.Role != auth.RoleAdmin {
		k.Owner = p.User // a member's keys are theirs; a team_admin's too, for the audit
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
	p := auth.PrincipalFrom(ctx)
	data := make([]Key, 0, len(list))
	for _, k := range list {
		if auth.Sees(p, auth.KeyResource(k)) { // another team's keys are not listed
			data = append(data, Encode(k))
		}
	}
	return http.StatusOK, map[string]any{"object": "list", "data": data}, nil
}

// Get serves GET /admin/keys/{id}.
func (ks Keys) Get(ctx context.Context, id string, _ []byte) (int, any, error) {
	k, err := ks.reach(ctx, http.MethodGet, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, Encode(k), nil
}

// Patch serves PATCH /admin/keys/{id}: the body's fields change, the others stay.
func (ks Keys) Patch(ctx context.Context, id string, body []byte) (int, any, error) {
	in, err := DecodeKey(body)
	if err != nil {
		return 0, nil, err
	}
	if _, err := ks.reach(ctx, http.MethodPatch, id); err != nil {
		return 0, nil, err
	}
	now, p := time.Now(), auth.PrincipalFrom(ctx)
	k, err := ks.Store.Update(ctx, id, func(k *auth.Key) error {
		if err := verdict(auth.Reach(p, http.MethodPatch, auth.KeyResource(k)), StoreError(auth.ErrNotFound)); err != nil {
			return err // changed since reach: decide on what is stored
		}
		return ks.apply(ctx, in, k, now)
	})
	if err != nil {
		return 0, nil, StoreError(err)
	}
	return http.StatusOK, Encode(k), nil
}

// Delete serves DELETE /admin/keys/{id}.
func (ks Keys) Delete(ctx context.Context, id string, _ []byte) (int, any, error) {
	if _, err := ks.reach(ctx, http.MethodDelete, id); err != nil {
		return 0, nil, err
	}
	if err := ks.Store.Delete(ctx, id); err != nil {
		return 0, nil, StoreError(err)
	}
	return http.StatusOK, map[string]any{"id": id, "object": "key.deleted", "deleted": true}, nil
}

// apply sets in's fields on k, whose guardrails must be configured ones, and whose team
// must be one the caller may put it in (into): a key made or moved by a non-admin lands in
// one of their teams, never in none. The policy is asked before the team's existence, so a
// member learns nothing of teams not theirs.
func (ks Keys) apply(ctx context.Context, in *KeyInput, k *auth.Key, now time.Time) error {
	was := k.Capture
	if err := in.Apply(k, now); err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	if err := into(p, k.Team); err != nil {
		return err
	}
	if err := lowers(p, was, k.Capture); err != nil {
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

// into is the answer to p putting a key into team (auth.Into): nil, or a 403 that says
// why. A non-admin's key must name one of their teams, which the caller cannot guess from a
// bare "forbidden"; one in no team can make no key at all, and is told whom to ask.
func into(p *auth.Principal, team string) error {
	if auth.Into(p, team) == auth.Allow {
		return nil
	}
	if p == nil || (p.Role != auth.RoleTeamAdmin && p.Role != auth.RoleMember) {
		return forbidden // a viewer's, or no principal's: the role alone refuses
	}
	msg := "A key you make must belong to one of your teams (" + strings.Join(p.Teams, ", ") +
		"), so that the team's models, limits and budget apply to it: set team to one of them."
	if len(p.Teams) == 0 {
		msg = "You belong to no team, and a key you make must belong to one of your teams, so that the team's " +
			"models, limits and budget apply to it: ask an admin to add you to a team."
	}
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Code: "forbidden", Type: "invalid_request_error",
		Param: "team", Message: msg}
}

// lowers refuses a non-admin lowering what the request log keeps of a key's requests (was to
// now): a key's capture wins over its alias's and logs.capture, so a member's "metadata" (or
// a "" that drops an admin's "content") would take their requests out of a record the
// operator asked for. Asking for more, "content", is theirs to ask.
func lowers(p *auth.Principal, was, now string) error {
	if now == was || now == "content" || auth.Unscoped(p) {
		return nil
	}
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Code: "forbidden", Type: "invalid_request_error",
		Param: "capture", Message: "Only an admin may lower what the request log keeps of a key's requests: " +
			"set capture to content, or leave it as it is."}
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

// reach reads the key of id and asks the policy whether the caller may do method on it:
// 404 for a key it may not see (as for no key), 403 for one it sees but may not change.
func (ks Keys) reach(ctx context.Context, method, id string) (*auth.Key, error) {
	k, err := ks.Store.Get(ctx, id)
	if err != nil {
		return nil, StoreError(err)
	}
	if err := verdict(auth.Reach(auth.PrincipalFrom(ctx), method, auth.KeyResource(k)), StoreError(auth.ErrNotFound)); err != nil {
		return nil, err
	}
	return k, nil
}
