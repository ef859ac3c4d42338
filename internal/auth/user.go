package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"
)

// UserPrefix starts every personal API token: a reader of a log line or a leaked secret
// tells it from a virtual key (whose base62 body never holds a '-') at a glance.
const UserPrefix = Prefix + "user-"

// Personal tokens' lifetimes: DefaultTokenTTL when the request names no expiry, and never
// beyond MaxTokenTTL. A token is a credential of the admin API: it must end.
const (
	DefaultTokenTTL = 30 * 24 * time.Hour
	MaxTokenTTL     = 365 * 24 * time.Hour
)

// Sources of a user: made through the admin API, or at a first OpenID Connect sign-in.
const (
	SourceAPI  = "api"
	SourceOIDC = "oidc"
)

// User is a person who calls the admin API with a personal token or signs in to the
// console. A *User handed out by a Users store is shared: callers must not modify it.
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	Teams     []string  `json:"teams"`
	CreatedAt time.Time `json:"created_at"`
	Source    string    `json:"source"`
}

// Clone returns a deep copy of u.
func (u *User) Clone() *User {
	c := *u
	c.Teams = slices.Clone(u.Teams)
	return &c
}

// Principal is the user as the admin API's policy sees it.
func (u *User) Principal() *Principal {
	return &Principal{User: u.ID, Role: u.Role, Teams: slices.Clone(u.Teams)}
}

// UserToken is a personal API token as stored: its hash, never the token.
type UserToken struct {
	ID        string    `json:"id"`
	User      string    `json:"user"`
	Name      string    `json:"name"`
	Hash      string    `json:"hash"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Valid reports whether r is a role.
func (r Role) Valid() bool {
	return r == RoleAdmin || r == RoleTeamAdmin || r == RoleViewer || r == RoleMember
}

// Errors of a Users store, besides ErrNotFound and ErrExists.
var ErrNoUser = errors.New("no such user")

// Users holds the users and their personal tokens. Implementations are safe for concurrent
// use: UserMemory, redisstore.Users.
type Users interface {
	// CreateUser stores u; ErrExists when its id is taken.
	CreateUser(ctx context.Context, u *User) error
	// User returns the user of id, ErrNoUser when there is none.
	User(ctx context.Context, id string) (*User, error)
	// ListUsers returns every user, ordered by creation time then id.
	ListUsers(ctx context.Context) ([]*User, error)
	// UpdateUser applies fn to a copy of the user and stores it (id, source and creation
	// time kept); an error of fn is returned as is.
	UpdateUser(ctx context.Context, id string, fn func(*User) error) (*User, error)
	// DeleteUser removes the user and every token of theirs.
	DeleteUser(ctx context.Context, id string) error
	// CreateToken stores t, of a user that exists (ErrNoUser otherwise).
	CreateToken(ctx context.Context, t *UserToken) error
	// Tokens returns the user's tokens, oldest first.
	Tokens(ctx context.Context, user string) ([]*UserToken, error)
	// DeleteToken removes the user's token id; ErrNotFound when the user has no such token.
	DeleteToken(ctx context.Context, user, id string) error
	// TokenByHash finds a token by its hash, ErrNotFound when there is none.
	TokenByHash(ctx context.Context, hash string) (*UserToken, error)
}

// NewUserID is "usr_" and 24 random hex digits.
func NewUserID() string { return "usr_" + randomHex(12) }

// OIDCUserID is the id of the user whose OpenID Connect subject is sub at issuer: the
// same on every replica and every sign-in, so a first sign-in creates the user and the next
// ones find it without an index.
func OIDCUserID(issuer, sub string) string {
	h := sha256.Sum256([]byte(issuer + "\x00" + sub))
	return "usr_" + hex.EncodeToString(h[:12])
}

// NewUserToken returns a token of user with its secret (shown once), ending at expires.
func NewUserToken(user, name string, now, expires time.Time) (*UserToken, string) {
	secret := UserPrefix + strings.TrimPrefix(NewSecret(), Prefix)
	return &UserToken{ID: "tok_" + randomHex(12), User: user, Name: name, Hash: Hash(secret),
		CreatedAt: now.UTC().Truncate(time.Second), ExpiresAt: expires.UTC()}, secret
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// AuthenticateUser returns the principal of a personal token: its user's role and teams as
// they are now (a change of role applies to the next call). ErrInvalid and ErrExpired are
// the caller's fault; any other error is the store's.
func AuthenticateUser(ctx context.Context, users Users, secret string, now time.Time) (*Principal, error) {
	if !strings.HasPrefix(secret, UserPrefix) {
		return nil, ErrInvalid
	}
	t, err := users.TokenByHash(ctx, Hash(secret))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrInvalid
	} else if err != nil {
		return nil, err
	}
	if !now.Before(t.ExpiresAt) {
		return nil, ErrExpired
	}
	u, err := users.User(ctx, t.User)
	if errors.Is(err, ErrNoUser) {
		return nil, ErrInvalid // deleted with its tokens; a store that lagged
	} else if err != nil {
		return nil, err
	}
	return u.Principal(), nil
}

// SessionPrincipal returns the principal a console session of user acts for: the user as
// the store has them now, their current teams included. ErrInvalid means the session must
// end: the user was deleted, their role is no longer role (a role change ends their
// sessions: the next one acts with the new role), or tokenHash, the hash of the personal
// token the session was signed in with ("" for an OpenID Connect one), is no longer a live
// token of theirs (revoked or expired). Any other error is the store's. Read on every call,
// never from a cache: a user changed through one replica is seen by all at once.
func SessionPrincipal(ctx context.Context, users Users, user string, role Role, tokenHash string, now time.Time) (*Principal, error) {
	if tokenHash != "" {
		t, err := users.TokenByHash(ctx, tokenHash)
		if errors.Is(err, ErrNotFound) {
			return nil, ErrInvalid
		} else if err != nil {
			return nil, err
		}
		if t.User != user || !now.Before(t.ExpiresAt) {
			return nil, ErrInvalid
		}
	}
	u, err := users.User(ctx, user)
	if errors.Is(err, ErrNoUser) {
		return nil, ErrInvalid
	} else if err != nil {
		return nil, err
	}
	if u.Role != role {
		return nil, ErrInvalid
	}
	return u.Principal(), nil
}

// SortUsers orders users by creation time, then id.
func SortUsers(us []*User) {
	slices.SortFunc(us, func(a, b *User) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Admins resolves who calls the admin API from the secret of a request: the admin token
// (Bootstrap) or a user's personal token. Read-only once built.
type Admins struct {
	token Token
	set   bool
	users Users
}

// NewAdmins is the admin API's callers: the admin token ("": none) and users' personal
// tokens (nil: none).
func NewAdmins(adminToken string, users Users) *Admins {
	return &Admins{token: NewToken(adminToken), set: adminToken != "", users: users}
}

// Principal returns the principal of secret; ErrMissing, ErrInvalid and ErrExpired are the
// caller's fault, any other error the store's.
func (a *Admins) Principal(ctx context.Context, secret string, now time.Time) (*Principal, error) {
	switch {
	case secret == "":
		return nil, ErrMissing
	case a.set && a.token.Matches(secret):
		return Bootstrap, nil
	case a.users != nil && strings.HasPrefix(secret, UserPrefix):
		return AuthenticateUser(ctx, a.users, secret, now)
	}
	return nil, ErrInvalid
}
