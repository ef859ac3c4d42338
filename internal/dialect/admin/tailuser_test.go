package admin

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

// A live tail opened by a user ends when the user is deleted or moved to another role or
// team, as the rest of their session does (issue 47); the admin token's runs on, and so
// does a user's whose record did not change.
func TestTailEndsWithItsUser(t *testing.T) {
	defer func(d time.Duration) { TailRecheck = d }(TailRecheck)
	TailRecheck = 10 * time.Millisecond
	for _, tc := range []struct {
		name   string
		change func(ctx context.Context, users auth.Users, id string) error
	}{
		{"deleted", func(ctx context.Context, users auth.Users, id string) error { return users.DeleteUser(ctx, id) }},
		{"demoted", func(ctx context.Context, users auth.Users, id string) error {
			_, err := users.UpdateUser(ctx, id, func(u *auth.User) error { u.Role = auth.RoleMember; return nil })
			return err
		}},
		{"moved", func(ctx context.Context, users auth.Users, id string) error {
			_, err := users.UpdateUser(ctx, id, func(u *auth.User) error { u.Teams = []string{"ads"}; return nil })
			return err
		}},
		{"unchanged", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ops := policyAPI(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			u := &auth.User{ID: "usr_tail", Role: auth.RoleViewer, Teams: []string{"search"}, CreatedAt: time.Now()}
			if err := a.Users.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			ended := func(p *auth.Principal) chan error {
				_, v, err := ops["call"]("GET", "/admin/logs/tail", req{p, Input{}})
				if err != nil {
					t.Fatal(err)
				}
				ev, ok := v.(Events)
				if !ok {
					t.Fatalf("the tail answered %T, want Events", v)
				}
				done := make(chan error, 1)
				go func() {
					done <- ev.Send(auth.WithPrincipal(ctx, p), func([]byte) error { return nil })
				}()
				return done
			}
			user, admin := ended(u.Principal()), ended(auth.Bootstrap)
			time.Sleep(5 * TailRecheck) // a few checks find the user as they were
			select {
			case err := <-user:
				t.Fatalf("the tail ended before any change: %v", err)
			default:
			}
			if tc.change == nil {
				cancel()
				<-user
				<-admin
				return
			}
			if err := tc.change(ctx, a.Users, u.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-user:
			case <-time.After(10 * time.Second):
				t.Fatal("the user's tail runs on after the change")
			}
			select {
			case err := <-admin:
				t.Fatalf("the admin token's tail ended with the user's: %v", err)
			default:
			}
			cancel()
			<-admin
		})
	}
}
