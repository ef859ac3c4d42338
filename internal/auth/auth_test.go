package auth

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"
)

func TestNewSecret(t *testing.T) {
	re := regexp.MustCompile(`^sk-sluice-[0-9A-Za-z]{43}$`)
	seen := map[string]bool{}
	for range 100 {
		s := NewSecret()
		if !re.MatchString(s) {
			t.Fatalf("got %q, want sk-sluice- and 43 base62 characters", s)
		}
		if seen[s] {
			t.Fatalf("got %q twice", s)
		}
		seen[s] = true
	}
	if got := Hash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("got %s, want the SHA-256 of abc", got)
	}
}

func TestAllows(t *testing.T) {
	k := &Key{Models: []string{"default", "sim/echo", "claude-*"}}
	for model, want := range map[string]bool{"default": true, "sim/echo": true, "fast": false, "sim/text": false,
		"claude-sonnet-4-5-20250929": true, "claude-*": true, "anth/claude-x": false} {
		if got := k.Allows(model); got != want {
			t.Errorf("%s: got %v, want %v", model, got, want)
		}
	}
	if !(&Key{Models: []string{"*"}}).Allows("x/y") {
		t.Errorf("got * refusing x/y, want it allowed")
	}
	if (&Key{}).Allows("default") {
		t.Errorf("got a key with no models allowed, want refused")
	}
}

type failing struct{ *Memory }

func (*failing) Lookup(context.Context, string) (*Key, error) { return nil, errors.New("down") }

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	static, stored, old := NewSecret(), NewSecret(), NewSecret()
	mem := &Memory{}
	ks := NewKeys([]*Key{{ID: "cfg", Name: "file", Hash: Hash(static)}}, mem)
	for _, k := range []*Key{{ID: "a", Hash: Hash(stored)}, {ID: "b", Hash: Hash(old), ExpiresAt: now}} {
		if err := ks.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, secret, wantID string
		wantErr              error
	}{
		{"static", static, "cfg", nil},
		{"stored", stored, "a", nil},
		{"missing", "", "", ErrMissing},
		{"wrong", NewSecret(), "", ErrInvalid},
		{"expired", old, "", ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ks.Authenticate(ctx, tt.secret, now)
			if !errors.Is(err, tt.wantErr) || (err == nil && k.ID != tt.wantID) {
				t.Errorf("got %v %v, want %s %v", k, err, tt.wantID, tt.wantErr)
			}
		})
	}
	if _, err := NewKeys(nil, &failing{&Memory{}}).Authenticate(ctx, stored, now); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("got %v, want the store's failure, not an invalid key", err)
	}
	if _, err := ks.Update(ctx, "cfg", func(*Key) error { return nil }); !errors.Is(err, ErrStatic) {
		t.Errorf("got %v updating a file key, want ErrStatic", err)
	}
	if err := ks.Delete(ctx, "cfg"); !errors.Is(err, ErrStatic) {
		t.Errorf("got %v deleting a file key, want ErrStatic", err)
	}
	if err := ks.Create(ctx, &Key{ID: "c", Hash: Hash(static)}); !errors.Is(err, ErrExists) {
		t.Errorf("got %v creating a file key's hash, want ErrExists", err)
	}
	list, _ := ks.List(ctx)
	if len(list) != 3 || list[0].ID != "cfg" || !list[0].Static {
		t.Errorf("got %d keys, want the file's first (static), then 2 stored", len(list))
	}
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	m := &Memory{}
	k := &Key{ID: "a", Hash: "h", Name: "n", Models: []string{"*"}}
	if err := m.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, &Key{ID: "b", Hash: "h"}); !errors.Is(err, ErrExists) {
		t.Errorf("got %v for a taken hash, want ErrExists", err)
	}
	u, err := m.Update(ctx, "a", func(k *Key) error { k.Name, k.ID, k.Hash = "renamed", "x", "y"; return nil })
	if err != nil || u.Name != "renamed" || u.ID != "a" || u.Hash != "h" {
		t.Errorf("got %+v %v, want renamed with id and hash kept", u, err)
	}
	if got, _ := m.Lookup(ctx, "h"); got.Name != "renamed" {
		t.Errorf("got %q by hash after update, want renamed", got.Name)
	}
	if err := m.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lookup(ctx, "h"); !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v after delete, want ErrNotFound", err)
	}
	if _, err := m.Update(ctx, "a", func(*Key) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v updating a deleted key, want ErrNotFound", err)
	}
}

func TestToken(t *testing.T) {
	tok := NewToken("admin-secret")
	for s, want := range map[string]bool{"admin-secret": true, "admin-secre": false, "admin-secret ": false, "": false} {
		if got := tok.Matches(s); got != want {
			t.Errorf("Matches(%q) = %v, want %v", s, got, want)
		}
	}
}
