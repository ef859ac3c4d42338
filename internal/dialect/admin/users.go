package admin

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
)

// userRoutes are the users' and their personal tokens' routes (/admin/users).
func (a API) userRoutes() []Route {
	return []Route{
		{http.MethodPost, "/admin/users", a.createUser},
		{http.MethodGet, "/admin/users", a.listUsers},
		{http.MethodGet, "/admin/users/:id", a.getUser},
		{http.MethodPatch, "/admin/users/:id", a.patchUser},
		{http.MethodDelete, "/admin/users/:id", a.deleteUser},
		{http.MethodPost, "/admin/users/:id/tokens", a.createToken},
		{http.MethodGet, "/admin/users/:id/tokens", a.listTokens},
		{http.MethodDelete, "/admin/users/:id/tokens/:token", a.deleteToken},
	}
}

// User is a user as the admin API shows it.
type User struct {
	*auth.User
	Object string `json:"object"`
}

func encodeUser(u *auth.User) User {
	if u.Teams == nil {
		u = u.Clone()
		u.Teams = []string{}
	}
	return User{User: u, Object: "user"}
}

// UserInput is the body of POST and PATCH /admin/users: absent members are nil (PATCH
// leaves them).
type UserInput struct {
	Email *string   `json:"email"`
	Name  *string   `json:"name"`
	Role  *string   `json:"role"`
	Teams *[]string `json:"teams"`
}

func (in *UserInput) apply(u *auth.User) error {
	if in.Email != nil {
		u.Email = *in.Email
	}
	if in.Name != nil {
		u.Name = *in.Name
	}
	if in.Role != nil {
		u.Role = auth.Role(*in.Role)
	}
	if in.Teams != nil {
		u.Teams = *in.Teams
	}
	switch {
	case !u.Role.Valid():
		return Bad("role", "role is admin, team_admin, viewer or member.")
	case len(u.Email) > 256 || len(u.Name) > 256:
		return Bad("email", "email and name are at most 256 bytes.")
	case len(u.Teams) > 64:
		return Bad("teams", "teams lists at most 64 teams.")
	}
	for _, t := range u.Teams {
		if t == "" || len(t) > 256 {
			return Bad("teams", "a team is a name of 1 to 256 bytes.")
		}
	}
	return nil
}

func userError(err error) error {
	switch {
	case errors.Is(err, auth.ErrNoUser):
		return &llm.Error{Kind: llm.NotFound, Code: "user_not_found", Type: "invalid_request_error", Param: "id",
			Message: "No user with this id."}
	case errors.Is(err, auth.ErrNotFound):
		return &llm.Error{Kind: llm.NotFound, Code: "token_not_found", Type: "invalid_request_error", Param: "token",
			Message: "The user has no token with this id."}
	}
	return StoreError(err)
}

// user reads the user of id and asks the policy whether the caller may see them: 404 for
// one of another team, as for no user.
func (a API) user(ctx context.Context, id string) (*auth.User, error) {
	u, err := a.Users.User(ctx, id)
	if err != nil {
		return nil, userError(err)
	}
	if !auth.Sees(auth.PrincipalFrom(ctx), auth.Resource{Teams: u.Teams, Owner: u.ID}) {
		return nil, userError(auth.ErrNoUser)
	}
	return u, nil
}

func (a API) createUser(ctx context.Context, in Input) (int, any, error) {
	var body UserInput
	if err := decodeStrict(in.Body, &body, "email, name, role and teams"); err != nil {
		return 0, nil, err
	}
	u := &auth.User{ID: auth.NewUserID(), Role: auth.RoleMember, CreatedAt: time.Now().UTC().Truncate(time.Second), Source: auth.SourceAPI}
	if err := body.apply(u); err != nil {
		return 0, nil, err
	}
	if err := a.Users.CreateUser(ctx, u); err != nil {
		return 0, nil, userError(err)
	}
	return http.StatusCreated, encodeUser(u), nil
}

func (a API) listUsers(ctx context.Context, _ Input) (int, any, error) {
	us, err := a.Users.ListUsers(ctx)
	if err != nil {
		return 0, nil, userError(err)
	}
	p, data := auth.PrincipalFrom(ctx), []User{}
	for _, u := range us {
		if auth.Sees(p, auth.Resource{Teams: u.Teams, Owner: u.ID}) {
			data = append(data, encodeUser(u))
		}
	}
	return http.StatusOK, map[string]any{"object": "list", "data": data}, nil
}

func (a API) getUser(ctx context.Context, in Input) (int, any, error) {
	u, err := a.user(ctx, in.ID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, encodeUser(u), nil
}

func (a API) patchUser(ctx context.Context, in Input) (int, any, error) {
	var body UserInput
	if err := decodeStrict(in.Body, &body, "email, name, role and teams"); err != nil {
		return 0, nil, err
	}
	u, err := a.Users.UpdateUser(ctx, in.ID, body.apply)
	if err != nil {
		return 0, nil, userError(err)
	}
	return http.StatusOK, encodeUser(u), nil
}

func (a API) deleteUser(ctx context.Context, in Input) (int, any, error) {
	if err := a.Users.DeleteUser(ctx, in.ID); err != nil {
		return 0, nil, userError(err)
	}
	return http.StatusOK, map[string]any{"id": in.ID, "object": "user.deleted", "deleted": true}, nil
}

// Token is a personal token as the admin API shows it; Secret only in the answer to its
// creation (the store keeps its hash).
type Token struct {
	ID        string    `json:"id"`
	Object    string    `json:"object"`
	Secret    string    `json:"token,omitempty"`
	User      string    `json:"user"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func encodeToken(t *auth.UserToken) Token {
	return Token{ID: t.ID, Object: "user_token", User: t.User, Name: t.Name, CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt}
}

// tokensOf reads the user of id and asks the policy whether the caller may do method on
// their tokens (their own only, but for admin).
func (a API) tokensOf(ctx context.Context, method, id string) (*auth.User, error) {
	u, err := a.Users.User(ctx, id)
	if err != nil {
		return nil, userError(err)
	}
	if err := verdict(auth.Tokens(auth.PrincipalFrom(ctx), method, u), userError(auth.ErrNoUser)); err != nil {
		return nil, err
	}
	return u, nil
}

// createToken serves POST /admin/users/{id}/tokens {"name", "expires_at"}: a new token,
// whose secret only this answer shows; expires_at defaults to auth.DefaultTokenTTL from
// now and may not be beyond auth.MaxTokenTTL.
func (a API) createToken(ctx context.Context, in Input) (int, any, error) {
	u, err := a.tokensOf(ctx, http.MethodPost, in.ID)
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		Name      string     `json:"name"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	if err := decodeStrict(in.Body, &body, "name and expires_at (RFC 3339)"); err != nil {
		return 0, nil, err
	}
	now := time.Now()
	end := now.Add(auth.DefaultTokenTTL)
	switch {
	case len(body.Name) > 256:
		return 0, nil, Bad("name", "name is at most 256 bytes.")
	case body.ExpiresAt == nil:
	case !body.ExpiresAt.After(now):
		return 0, nil, Bad("expires_at", "expires_at is in the past.")
	case body.ExpiresAt.Sub(now) > auth.MaxTokenTTL:
		return 0, nil, Bad("expires_at", "expires_at is at most 365 days ahead.")
	default:
		end = *body.ExpiresAt
	}
	t, secret := auth.NewUserToken(u.ID, body.Name, now, end)
	if err := a.Users.CreateToken(ctx, t); err != nil {
		return 0, nil, userError(err)
	}
	w := encodeToken(t)
	w.Secret = secret
	return http.StatusCreated, w, nil
}

func (a API) listTokens(ctx context.Context, in Input) (int, any, error) {
	if _, err := a.tokensOf(ctx, http.MethodGet, in.ID); err != nil {
		return 0, nil, err
	}
	ts, err := a.Users.Tokens(ctx, in.ID)
	if err != nil {
		return 0, nil, userError(err)
	}
	data := make([]Token, len(ts))
	for i, t := range ts {
		data[i] = encodeToken(t)
	}
	return http.StatusOK, map[string]any{"object": "list", "data": data}, nil
}

func (a API) deleteToken(ctx context.Context, in Input) (int, any, error) {
	if _, err := a.tokensOf(ctx, http.MethodDelete, in.ID); err != nil {
		return 0, nil, err
	}
	if err := a.Users.DeleteToken(ctx, in.ID, in.Sub); err != nil {
		return 0, nil, userError(err)
	}
	return http.StatusOK, map[string]any{"id": in.Sub, "object": "user_token.deleted", "deleted": true}, nil
}
