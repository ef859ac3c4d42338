package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Team is a team as the admin API shows it (issue 37), in the keys' vocabulary. Its id is
// its name, which never changes.
type Team struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Name      string          `json:"name"`
	Models    []string        `json:"models"`
	RPM       int64           `json:"rpm"`
	TPM       int64           `json:"tpm"`
	Budget    Budget          `json:"budget"`
	MCP       *auth.MCPAccess `json:"mcp"`
	CreatedAt time.Time       `json:"created_at"`
	Source    string          `json:"source"` // api | config (read-only)
	// Keys are the team's keys, in GET /admin/teams/{id} only.
	Keys []TeamKey `json:"keys,omitempty"`
}

// TeamKey is a key of a team as its team shows it: never its hash.
type TeamKey struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// EncodeTeam is t as the admin API shows it.
func EncodeTeam(t *auth.Team) Team {
	w := Team{ID: t.Name, Object: "team", Name: t.Name, Models: t.Models, RPM: t.RPM, TPM: t.TPM,
		Budget: Budget{DailyUSD: t.DailyUSD, MonthlyUSD: t.MonthlyUSD}, MCP: t.MCP, CreatedAt: t.CreatedAt, Source: "api"}
	if w.Models == nil {
		w.Models = []string{}
	}
	if t.Static {
		w.Source = "config"
	}
	return w
}

// TeamInput is the body of POST and PATCH /admin/teams. Absent members are nil: PATCH
// leaves them as they are; "mcp": null lifts the team's restriction of the MCP gateway.
type TeamInput struct {
	Name   *string         `json:"name"`
	Models []string        `json:"models"`
	RPM    *int64          `json:"rpm"`
	TPM    *int64          `json:"tpm"`
	Budget *BudgetInput    `json:"budget"`
	MCP    json.RawMessage `json:"mcp"`
}

// DecodeTeam decodes the body of POST and PATCH as strictly as DecodeKey.
func DecodeTeam(body []byte) (*TeamInput, error) {
	in := &TeamInput{}
	return in, decodeStrict(body, in, "name, models, rpm, tpm, budget and mcp")
}

// Apply sets the members present in in on t, and checks the result. The name is set at
// creation only: keys, the request log and the account name the team.
func (in *TeamInput) Apply(t *auth.Team) error {
	if in.Name != nil && *in.Name != t.Name {
		if t.Name != "" {
			return Bad("name", "A team's name cannot change: keys, the request log and the account name it.")
		}
		t.Name = *in.Name
	}
	if in.Models != nil {
		t.Models = in.Models
	}
	if in.RPM != nil {
		t.RPM = *in.RPM
	}
	if in.TPM != nil {
		t.TPM = *in.TPM
	}
	if err := in.Budget.apply(&t.DailyUSD, &t.MonthlyUSD); err != nil {
		return err
	}
	if err := decodeMCP(in.MCP, &t.MCP); err != nil {
		return err
	}
	switch {
	case !auth.ValidTeamName(t.Name):
		return Bad("name", "name is 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit.")
	case len(t.Models) == 0 || len(t.Models) > 256:
		return Bad("models", `models must list 1 to 256 model aliases or provider/model targets; ["*"] allows all.`)
	case t.RPM < 0 || t.TPM < 0:
		return Bad("rpm", "rpm and tpm must not be negative (0: unlimited).")
	}
	for _, m := range t.Models {
		if m == "" {
			return Bad("models", "models cannot hold an empty name.")
		}
	}
	return nil
}

// Teams is the team management of the admin API (/admin/teams): config teams are read-only,
// API teams are stored (in Redis with one). Each method serves one route as Keys' do. An
// admin sees every team; a team_admin or viewer theirs only (another's is a 404, as no
// team), and only an admin changes a team itself (the route policy, auth.Route). Safe for
// concurrent use.
type Teams struct {
	Store *auth.Teams
	// Keys are the keys, whose team a team lists and whose presence refuses its deletion.
	Keys *auth.Keys
	// Users are the users, a team's members (members.go); nil: no member routes.
	Users auth.Users
}

// Create serves POST /admin/teams.
func (ts Teams) Create(ctx context.Context, _ string, body []byte) (int, any, error) {
	in, err := DecodeTeam(body)
	if err != nil {
		return 0, nil, err
	}
	t := &auth.Team{Models: []string{"*"}, CreatedAt: time.Now().UTC().Truncate(time.Second)}
	if err := in.Apply(t); err != nil {
		return 0, nil, err
	}
	if err := ts.Store.Create(ctx, t); err != nil {
		return 0, nil, TeamStoreError(err)
	}
	return http.StatusCreated, EncodeTeam(t), nil
}

// List serves GET /admin/teams.
func (ts Teams) List(ctx context.Context, _ string, _ []byte) (int, any, error) {
	list, err := ts.Store.List(ctx)
	if err != nil {
		return 0, nil, TeamStoreError(err)
	}
	p, data := auth.PrincipalFrom(ctx), []Team{}
	for _, t := range list {
		if auth.Sees(p, auth.TeamResource(t.Name)) {
			data = append(data, EncodeTeam(t))
		}
	}
	return http.StatusOK, map[string]any{"object": "list", "data": data}, nil
}

// Get serves GET /admin/teams/{id}: the team and its keys' ids and names.
func (ts Teams) Get(ctx context.Context, id string, _ []byte) (int, any, error) {
	t, err := ts.team(ctx, http.MethodGet, id)
	if err != nil {
		return 0, nil, err
	}
	w := EncodeTeam(t)
	w.Keys = []TeamKey{}
	if ts.Keys != nil {
		ks, err := ts.Keys.OfTeam(ctx, t.Name)
		if err != nil {
			return 0, nil, StoreError(err)
		}
		for _, k := range ks {
			w.Keys = append(w.Keys, TeamKey{ID: k.ID, Name: k.Name})
		}
	}
	return http.StatusOK, w, nil
}

// team reads the team of id and asks the policy whether the caller may do method on it:
// another team's is a 404, as no team, so that its existence is not told.
func (ts Teams) team(ctx context.Context, method, id string) (*auth.Team, error) {
	t, err := ts.Store.Get(ctx, id)
	if err != nil {
		return nil, TeamStoreError(err)
	}
	if err := verdict(auth.Reach(auth.PrincipalFrom(ctx), method, auth.TeamResource(t.Name)), TeamStoreError(auth.ErrNoTeam)); err != nil {
		return nil, err
	}
	return t, nil
}

// Patch serves PATCH /admin/teams/{id}: the body's fields change, the others stay.
func (ts Teams) Patch(ctx context.Context, id string, body []byte) (int, any, error) {
	in, err := DecodeTeam(body)
	if err != nil {
		return 0, nil, err
	}
	t, err := ts.Store.Update(ctx, id, in.Apply)
	if err != nil {
		return 0, nil, TeamStoreError(err)
	}
	return http.StatusOK, EncodeTeam(t), nil
}

// Delete serves DELETE /admin/teams/{id}: refused (409 team_in_use) while keys belong to
// the team; move or delete them first.
func (ts Teams) Delete(ctx context.Context, id string, _ []byte) (int, any, error) {
	if err := ts.Store.Delete(ctx, id, ts.Keys); err != nil {
		return 0, nil, TeamStoreError(err)
	}
	return http.StatusOK, map[string]any{"id": id, "object": "team.deleted", "deleted": true}, nil
}

// TeamStoreError maps the team store's errors to the admin API's answers.
func TeamStoreError(err error) error {
	var le *llm.Error
	conflict := func(code, msg string) error {
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: code, Type: "invalid_request_error", Message: msg}
	}
	switch {
	case errors.As(err, &le):
		return err
	case errors.Is(err, auth.ErrNoTeam):
		return &llm.Error{Kind: llm.NotFound, Code: "team_not_found", Type: "invalid_request_error", Param: "id",
			Message: "No team with this id."}
	case errors.Is(err, auth.ErrTeamStatic):
		return conflict("team_in_config", "This team is defined in the configuration file: change it there.")
	case errors.Is(err, auth.ErrTeamExists):
		return conflict("team_exists", "A team with this name exists.")
	case errors.Is(err, auth.ErrTeamInUse):
		return conflict("team_in_use", "Keys still belong to this team: move or delete them first (GET /admin/teams/{id} lists them).")
	}
	return unreachable("The team store (Redis) is unreachable. Retry shortly.")
}
