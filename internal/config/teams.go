package config

import (
	"fmt"

	"github.com/sluice-gw/sluice/internal/auth"
)

// Team is a team listed in the file (issue 37), in the keys' vocabulary: the keys that name
// it (Key.Team) pass its models, MCP access, rate limits and budget as well as their own.
type Team struct {
	// Name is the team's name, as keys, the request log and the account name it.
	Name   string     `yaml:"name"`
	Models []string   `yaml:"models"` // aliases, provider/model, or "*"; absent: ["*"]
	MCP    *KeyMCP    `yaml:"mcp"`    // absent: no restriction of the team's
	Limits TeamLimits `yaml:"limits"`
	Budget Budget     `yaml:"budget"`
}

// TeamLimits are per minute, for all the team's keys together; zero means unlimited.
type TeamLimits struct {
	RPM int64 `yaml:"rpm"`
	TPM int64 `yaml:"tpm"`
}

// teams checks the file's teams and returns their names, which the keys' team must be one
// of.
func (v *validator) teams(c *Config) map[string]bool {
	names := map[string]bool{}
	for i, t := range c.Teams {
		path := fmt.Sprintf("teams[%d]", i)
		switch {
		case !auth.ValidTeamName(t.Name):
			v.errorf(path+".name", "want 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit")
		case names[t.Name]:
			v.errorf(path+".name", "team %q is listed twice", t.Name)
		}
		names[t.Name] = true
		v.models(c, path, t.Models)
		v.mcpAccess(c, path, t.MCP)
		v.nonNegative(path+".limits.rpm", t.Limits.RPM)
		v.nonNegative(path+".limits.tpm", t.Limits.TPM)
		if t.Budget.DailyUSD < 0 || t.Budget.MonthlyUSD < 0 {
			v.errorf(path+".budget", "must not be negative")
		}
	}
	return names
}
