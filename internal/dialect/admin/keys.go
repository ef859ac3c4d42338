package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Key is a key as the admin API shows it. Secret is set only in the answer to its
// creation: the gateway keeps only the hash.
type Key struct {
	ID        string            `json:"id"`
	Object    string            `json:"object"`
	Secret    string            `json:"key,omitempty"`
	Name      string            `json:"name"`
	Models    []string          `json:"models"`
	RPM       int64             `json:"rpm"`
	TPM       int64             `json:"tpm"`
	ExpiresAt *time.Time        `json:"expires_at"`
	Metadata  map[string]string `json:"metadata"`
	CreatedAt time.Time         `json:"created_at"`
	Source    string            `json:"source"` // api | config (read-only)

	// Budget, Guardrails, MCP and ToolCallsPerMinute: budget.go.
	Budget             Budget          `json:"budget"`
	Guardrails         []string        `json:"guardrails"`
	MCP                *auth.MCPAccess `json:"mcp"`
	ToolCallsPerMinute int64           `json:"tool_calls_per_minute"`
	Capture            string          `json:"capture"` // "": the alias's, else logs.capture
	// Team is the team the key belongs to; null: none.
	Team *string `json:"team"`
	// Owner is the user who made the key ("": the admin token or the file).
	Owner string `json:"owner"`
}

// Encode is k as the admin API shows it.
func Encode(k *auth.Key) Key {
	w := Key{ID: k.ID, Object: "key", Name: k.Name, Models: k.Models, RPM: k.RPM, TPM: k.TPM,
		Metadata: k.Metadata, CreatedAt: k.CreatedAt, Source: "api"}
	w.Budget, w.Guardrails = keyExtras(k)
	w.MCP, w.ToolCallsPerMinute, w.Capture = k.MCP, k.ToolCallsPerMinute, k.Capture
	w.Owner = k.Owner
	if k.Team != "" {
		team := k.Team
		w.Team = &team
	}
	if w.Models == nil {
		w.Models = []string{}
	}
	if w.Metadata == nil {
		w.Metadata = map[string]string{}
	}
	if !k.ExpiresAt.IsZero() {
		t := k.ExpiresAt
		w.ExpiresAt = &t
	}
	if k.Static {
		w.Source = "config"
	}
	return w
}

// KeyInput is the body of POST and PATCH. Absent members are nil: PATCH leaves them as they
// are; "expires_at": null removes the expiry.
type KeyInput struct {
	Name      *string           `json:"name"`
	Models    []string          `json:"models"`
	RPM       *int64            `json:"rpm"`
	TPM       *int64            `json:"tpm"`
	ExpiresAt json.RawMessage   `json:"expires_at"`
	Metadata  map[string]string `json:"metadata"`

	// Budget, Guardrails, MCP and ToolCallsPerMinute: budget.go. "mcp": null removes the
	// key's access to the MCP gateway.
	Budget             *BudgetInput    `json:"budget"`
	Guardrails         []string        `json:"guardrails"`
	MCP                json.RawMessage `json:"mcp"`
	ToolCallsPerMinute *int64          `json:"tool_calls_per_minute"`
	// Capture is what the request log keeps of the key's requests: "metadata", "content",
	// or "" (the alias's choice).
	Capture *string `json:"capture"`
	// Team names the team the key joins (it must exist); "" or null: none.
	Team json.RawMessage `json:"team"`
}

// Bad is the 400 of a key body's member param.
func Bad(param, msg string) error {
	return &llm.Error{Kind: llm.Invalid, Param: param, Type: "invalid_request_error", Message: msg}
}

// DecodeKey decodes the body of POST and PATCH as strictly as /v1 decodes its bodies
// (oai.Scan: exactly one JSON object, UTF-8, no duplicate member), then into a KeyInput,
// which refuses unknown members. A lenient decoder took null for an empty object: a key for
// every model.
func DecodeKey(body []byte) (*KeyInput, error) {
	in := &KeyInput{}
	if err := decodeStrict(body, in, "name, models, rpm, tpm, expires_at, metadata, budget, guardrails, mcp, tool_calls_per_minute, capture and team"); err != nil {
		return nil, err
	}
	return in, nil
}

// decodeStrict decodes a body into v as strictly as /v1 decodes its bodies (oai.Scan:
// exactly one JSON object, UTF-8, no duplicate member), refusing unknown members; shape
// names the members in the 400.
func decodeStrict(body []byte, v any, shape string) error {
	if err := oai.Scan(body, func(string, json.RawMessage) error { return nil }); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Bad("", "The body must be a JSON object with "+shape+": "+oai.JSONMsg(err))
	}
	return nil
}

// Apply sets the members present in in on k, and checks the result.
func (in *KeyInput) Apply(k *auth.Key, now time.Time) error {
	if in.Name != nil {
		k.Name = *in.Name
	}
	if in.Models != nil {
		k.Models = in.Models
	}
	if in.RPM != nil {
		k.RPM = *in.RPM
	}
	if in.TPM != nil {
		k.TPM = *in.TPM
	}
	if in.Metadata != nil {
		k.Metadata = in.Metadata
	}
	if in.Capture != nil {
		if c := *in.Capture; c != "" && c != "metadata" && c != "content" {
			return Bad("capture", `capture must be "metadata", "content" or "" (the alias's choice).`)
		}
		k.Capture = *in.Capture
	}
	if err := in.applyExtras(k); err != nil {
		return err
	}
	if in.Team != nil {
		var team *string
		if json.Unmarshal(in.Team, &team) != nil {
			return Bad("team", "team is the name of a team, or null for none.")
		}
		k.Team = ""
		if team != nil {
			k.Team = *team
		}
	}
	switch {
	case in.ExpiresAt == nil:
	case string(in.ExpiresAt) == "null":
		k.ExpiresAt = time.Time{}
	default:
		var t time.Time
		if json.Unmarshal(in.ExpiresAt, &t) != nil {
			return Bad("expires_at", "expires_at must be an RFC 3339 timestamp (2026-12-31T23:59:59Z) or null.")
		}
		if !t.After(now) {
			return Bad("expires_at", "expires_at is in the past.")
		}
		k.ExpiresAt = t.UTC()
	}
	switch {
	case len(k.Name) > 256:
		return Bad("name", "name is longer than 256 bytes.")
	case len(k.Team) > 256:
		return Bad("team", "team is longer than 256 bytes.")
	case len(k.Models) == 0 || len(k.Models) > 256:
		return Bad("models", `models must list 1 to 256 model aliases or provider/model targets; ["*"] allows all.`)
	case k.RPM < 0 || k.TPM < 0:
		return Bad("rpm", "rpm and tpm must not be negative (0: unlimited).")
	case len(k.Metadata) > auth.MaxMetadataPairs:
		return Bad("metadata", "metadata holds at most 16 pairs.")
	}
	for _, m := range k.Models {
		if m == "" {
			return Bad("models", "models cannot hold an empty name.")
		}
	}
	for n, v := range k.Metadata {
		if n == "" || len(n) > auth.MaxMetadataKey || len(v) > auth.MaxMetadataValue {
			return Bad("metadata", "metadata keys are 1 to 64 bytes, values at most 512.")
		}
	}
	return nil
}

// StoreError maps a key Store's errors to the admin API's answers.
func StoreError(err error) error {
	var le *llm.Error
	switch {
	case errors.As(err, &le):
		return err
	case errors.Is(err, auth.ErrNotFound):
		return &llm.Error{Kind: llm.NotFound, Code: "key_not_found", Type: "invalid_request_error", Param: "id",
			Message: "No key with this id."}
	case errors.Is(err, auth.ErrStatic):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: "key_in_config", Type: "invalid_request_error",
			Message: "This key is defined in the configuration file: change it there."}
	case errors.Is(err, auth.ErrExists):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: "key_exists", Type: "invalid_request_error",
			Message: "A key with this id or hash exists."}
	}
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: "The key store (Redis) is unreachable. Retry shortly."}
}
