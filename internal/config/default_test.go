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
	}{
		{"no keys", env(), []string{"sim/echo"}, []string{"sim/echo"}, 2},
		{"openai key", env("OPENAI_API_KEY", "sk-x"),
			[]string{"openai/gpt-4.1-mini", "sim/echo"}, []string{"openai/gpt-4.1-nano", "sim/echo"}, 1},
		{"both keys", env("OPENAI_API_KEY", "sk-x", "ANTHROPIC_API_KEY", "sk-ant-x"),
			[]string{"openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5", "sim/echo"},
			[]string{"openai/gpt-4.1-nano", "sim/echo"}, 0},
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
