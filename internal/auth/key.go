package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math/big"
	"path"
	"slices"
	"time"
)

// Prefix starts every key the gateway makes.
const Prefix = "sk-sluice-"

// Metadata caps of a key, OpenAI's: 16 pairs, keys of 64 characters, values of 512. The
// configuration's keys and the admin API's are held to them alike.
const (
	MaxMetadataPairs = 16
	MaxMetadataKey   = 64
	MaxMetadataValue = 512
)

// Key is a virtual key as stored: everything but the key itself. A *Key handed out by a
// Store or Keys is shared: callers must not modify it (Store.Update hands its function a copy).
type Key struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Hash is the lower-case hex SHA-256 of the key.
	Hash string `json:"hash"`
	// Models are the aliases (or provider/model targets) the key may call; "*" allows all.
	Models []string `json:"models"`
	// RPM and TPM are requests and tokens per minute; 0 means unlimited.
	RPM int64 `json:"rpm"`
	TPM int64 `json:"tpm"`
	// ExpiresAt is when the key stops working; zero means never.
	ExpiresAt time.Time         `json:"expires_at,omitzero"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	// DailyUSD and MonthlyUSD cap the key's spending per UTC day and month; 0 means
	// unlimited.
	DailyUSD   float64 `json:"daily_usd,omitempty"`
	MonthlyUSD float64 `json:"monthly_usd,omitempty"`
	// Guardrails name configured guardrails applied to every request of the key, after the
	// model alias's own.
	Guardrails []string `json:"guardrails,omitempty"`
	// MCP is what the key may use of the MCP gateway (/mcp); nil: nothing.
	MCP *MCPAccess `json:"mcp,omitempty"`
	// ToolCallsPerMinute caps the key's tool calls through the MCP gateway (0: unlimited);
	// each call also counts against RPM.
	ToolCallsPerMinute int64 `json:"tool_calls_per_minute,omitempty"`
	// Capture is what the request log keeps of the key's requests: "metadata", or
	// "content" (the messages and the answer, after redaction); "": the alias's choice.
	Capture string `json:"capture,omitempty"`
	// Team is the team the key belongs to (at most one); "": none. A request of the key
	// passes the team's model access, limits and budget as well as its own (issue 37).
	Team string `json:"team,omitempty"`
	// Owner is the user who made the key through the admin API ("": the admin token or
	// the file): a member sees and changes the keys they own, and only those.
	Owner string `json:"owner,omitempty"`
	// Static is set on keys of the configuration file: the admin API cannot change them.
	Static bool `json:"-"`
}

// Allows reports whether the key may call model: an alias, or provider/model, listed by the
// key, a pattern it matches (path.Match: "claude-*", as pattern aliases are named), or "*". A direct provider/model call is never allowed by the alias it belongs to.
func (k *Key) Allows(model string) bool {
	return slices.Contains(k.Models, "*") || slices.Contains(k.Models, model) ||
		slices.ContainsFunc(k.Models, func(p string) bool { ok, _ := path.Match(p, model); return ok })
}

// Expired reports whether the key has expired at now.
func (k *Key) Expired(now time.Time) bool { return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt) }

// MCPAccess is what a key may use of the MCP gateway, on top of each server's own filter:
// Servers are server names ("*": all; empty: all, when Tools is set) and Tools, when set,
// the server__tool names it may call, as path.Match patterns ("docs__search*").
type MCPAccess struct {
	Servers []string `json:"servers,omitempty"`
	Tools   []string `json:"tools,omitempty"`
}

// Clone returns a deep copy of k.
func (k *Key) Clone() *Key {
	c := *k
	c.Models = slices.Clone(k.Models)
	c.Guardrails = slices.Clone(k.Guardrails)
	if k.MCP != nil {
		c.MCP = &MCPAccess{Servers: slices.Clone(k.MCP.Servers), Tools: slices.Clone(k.MCP.Tools)}
	}
	if k.Metadata != nil {
		c.Metadata = make(map[string]string, len(k.Metadata))
		for n, v := range k.Metadata {
			c.Metadata[n] = v
		}
	}
	return &c
}

// Hash returns the hex SHA-256 of a key: what is stored and looked up. A plain hash suffices:
// the keys the gateway makes carry 256 random bits, so there is nothing to brute-force.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSecret returns a new key: Prefix and 32 random bytes in base62 (43 characters).
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+): it crashes instead
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, 43)
	base, mod := big.NewInt(62), new(big.Int)
	for i := len(out) - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return Prefix + string(out)
}

// NewID returns a new key id: "key_" and 24 hex digits. Ids are public (logs, URLs).
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "key_" + hex.EncodeToString(b[:])
}

// Token is a secret compared in constant time: neither its content nor its length leaks
// through the time a comparison takes (the admin token).
type Token [sha256.Size]byte

// NewToken is the token of secret.
func NewToken(secret string) Token { return sha256.Sum256([]byte(secret)) }

// Matches reports whether secret is the token's: their SHA-256 digests are compared.
func (t Token) Matches(secret string) bool {
	got := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(got[:], t[:]) == 1
}
