package redisstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// TestUsers: users and personal tokens in a real Redis, shared by two stores (replicas): a
// token made on one authenticates on the other, a revocation or a role change there applies
// at once, a user's deletion takes their tokens.
func TestUsers(t *testing.T) {
	srv := redistest.Start(t)
	a := store(t, srv, redisstore.Options{}, nil).Users()
	b := store(t, srv, redisstore.Options{}, nil).Users()
	ctx, now := t.Context(), time.Now()
	u := &auth.User{ID: auth.NewUserID(), Email: "ann@example.com", Role: auth.RoleTeamAdmin, Teams: []string{"search"},
		CreatedAt: now.UTC().Truncate(time.Second), Source: auth.SourceAPI}
	if err := a.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateUser(ctx, u); !errors.Is(err, auth.ErrExists) {
		t.Fatalf("the same id twice: %v", err)
	}
	tok, secret := auth.NewUserToken(u.ID, "ci", now, now.Add(time.Hour))
	if err := a.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	p, err := auth.AuthenticateUser(ctx, b, secret, now)
	if err != nil || p.User != u.ID || p.Role != auth.RoleTeamAdmin {
		t.Fatalf("on the other replica: %+v, %v", p, err)
	}
	if _, err := b.UpdateUser(ctx, u.ID, func(u *auth.User) error { u.Role = auth.RoleViewer; u.Source = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	if p, _ := auth.AuthenticateUser(ctx, a, secret, now); p.Role != auth.RoleViewer {
		t.Fatalf("role %s after the change, want viewer", p.Role)
	}
	if got, _ := a.User(ctx, u.ID); got.Source != auth.SourceAPI {
		t.Errorf("source changed to %q", got.Source)
	}
	if ts, err := a.Tokens(ctx, u.ID); err != nil || len(ts) != 1 || ts[0].Hash != auth.Hash(secret) {
		t.Fatalf("tokens %+v, %v", ts, err)
	}
	if err := b.DeleteToken(ctx, u.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.AuthenticateUser(ctx, a, secret, now); !errors.Is(err, auth.ErrInvalid) {
		t.Fatalf("revoked on the other replica: %v", err)
	}
	tok2, secret2 := auth.NewUserToken(u.ID, "", now, now.Add(time.Hour))
	_ = a.CreateToken(ctx, tok2)
	if err := b.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TokenByHash(ctx, auth.Hash(secret2)); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("a deleted user's token stayed: %v", err)
	}
	if err := a.DeleteUser(ctx, u.ID); !errors.Is(err, auth.ErrNoUser) {
		t.Errorf("deleted twice: %v", err)
	}
}
