package gateway

import (
	"maps"
	"slices"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
)

// TestKindTables: every kind config lets through has a builder here, and no builder waits
// for a kind config does not know.
func TestKindTables(t *testing.T) {
	got, want := slices.Sorted(maps.Keys(kinds)), slices.Sorted(slices.Values(config.KindNames()))
	if !slices.Equal(got, want) {
		t.Errorf("got kinds %v in the gateway's table, want config's %v", got, want)
	}
}

// The telemetry names of the kinds: the conventions' well-known values, else the
// provider's name.
func TestTelemetryNames(t *testing.T) {
	c := &config.Config{Providers: map[string]config.Provider{
		"o": {Kind: "openai"}, "a": {Kind: "anthropic"}, "b": {Kind: "bedrock"}, "g": {Kind: "gemini"},
		"v": {Kind: "vertex"}, "z": {Kind: "azure"}, "local": {Kind: "openai-compatible"}, "s": {Kind: "sim"},
	}}
	want := map[string]string{"o": "openai", "a": "anthropic", "b": "aws.bedrock", "g": "gcp.gemini",
		"v": "gcp.vertex_ai", "z": "azure.ai.openai", "local": "local", "s": "s"}
	if got := telemetryOptions(c).Providers; !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
