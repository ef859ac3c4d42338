package config

import (
	"reflect"
	"testing"
)

func TestEmbeddedDefault(t *testing.T) {
	chain := func(c *Config, alias string) []string {
		var ts []string
		for _, e := range c.Models[alias].Targets {
			ts = append(ts, e.Targets...)
		}
		return ts
	}
	tests := []struct {
		name             string
		lookup           func(string) (string, bool)
		wantDefault      []string
		wantFast         []string
		wantWarningCount int
		// wantAgents are the chains of the coding agents' pattern aliases.
		wantAgents map[string][]string
	}{
		{"no keys", env(), []string{"sim/echo"}, []string{"sim/echo"}, 4, map[string][]string{
			"claude-*": {"sim-anthropic/echo"}, "claude-haiku-*": {"sim-anthropic/echo"}, "gpt-*": {"sim-responses/echo"},
			"o[0-9]*": {"sim-responses/echo"}, "codex-*": {"sim-responses/echo"}, "gemini-*": {"sim/echo"},
			"gemini-*flash*": {"sim/echo"}}},
		{"openai key", env("OPENAI_API_KEY", "sk-x"),
			[]string{"openai/gpt-4.1-mini", "sim/echo"}, []string{"openai/gpt-4.1-nano", "sim/echo"}, 2, map[string][]string{
				"claude-*": {"openai/gpt-4.1", "sim-anthropic/echo"}, "gpt-*": {"openai-responses/gpt-5.1-codex", "sim-responses/echo"},
				"gemini-*": {"openai/gpt-4.1", "sim/echo"}, "gemini-*flash*": {"openai/gpt-4.1-mini", "sim/echo"}}},
		{"both keys", env("OPENAI_API_KEY", "sk-x", "ANTHROPIC_API_KEY", "sk-ant-x"),
			[]string{"openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5", "sim/echo"},
			[]string{"openai/gpt-4.1-nano", "sim/echo"}, 1, map[string][]string{
				"claude-*":       {"anthropic/claude-sonnet-4-5", "openai/gpt-4.1", "sim-anthropic/echo"},
				"claude-haiku-*": {"anthropic/claude-haiku-4-5", "openai/gpt-4.1-mini", "sim-anthropic/echo"},
				"o[0-9]*":        {"openai-responses/gpt-5.1-codex", "anthropic/claude-sonnet-4-5", "sim-responses/echo"}}},
		{"gemini key", env("GEMINI_API_KEY", "g-x"), []string{"sim/echo"}, []string{"sim/echo"}, 3, map[string][]string{
			"gemini-*": {"gemini/gemini-2.5-pro", "sim/echo"}, "gemini-*flash*": {"gemini/gemini-2.5-flash", "sim/echo"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseWith(defaultYAML, "default.yaml", tt.lookup)
			if err != nil {
				t.Fatalf("got %v, want the embedded default to parse", err)
			}
			if got := chain(c, "default"); !reflect.DeepEqual(got, tt.wantDefault) {
				t.Errorf("default: got %v, want %v", got, tt.wantDefault)
			}
			if got := chain(c, "fast"); !reflect.DeepEqual(got, tt.wantFast) {
				t.Errorf("fast: got %v, want %v", got, tt.wantFast)
			}
			for alias, want := range tt.wantAgents {
				if got := chain(c, alias); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %v, want %v", alias, got, want)
				}
				if got := c.Models[alias].HostedTools; got != "drop" {
					t.Errorf("%s: got hosted_tools %q, want drop", alias, got)
				}
			}
			if len(c.Warnings) != tt.wantWarningCount {
				t.Errorf("got warnings %q, want %d", c.Warnings, tt.wantWarningCount)
			}
			if c.Listen != "127.0.0.1:8080" || c.Redis.URL != "" || c.AuthEnabled() {
				t.Errorf("got listen %q redis %q auth %v, want loopback, no redis, no auth", c.Listen, c.Redis.URL, c.AuthEnabled())
			}
			if err := c.CheckListen(); err != nil {
				t.Errorf("got %v, want the default to pass CheckListen", err)
			}
		})
	}
	if Default() == nil { // from the real environment: must not panic
		t.Fatal("got nil, want a config")
	}
}
