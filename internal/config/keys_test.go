package config

import (
	"strings"
	"testing"
	"time"
)

const hashA = "a3f1c2d4e5b6a7980a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071"

func TestKeys(t *testing.T) {
	c := mustParse(t, providers+`models:
  default: [sim/echo]
keys:
  - name: team-a
    hash: "`+strings.ToUpper(hashA)+`"
    limits: {rpm: 60, tpm: 10000}
    expires_at: 2030-01-02
    metadata: {team: a}
  - {name: team-b, hash: "`+strings.Replace(hashA, "a3", "b3", 1)+`", models: [default, sim/echo], expires_at: "2030-01-02T03:04:05+01:00",
     mcp: {servers: ["*"], tools: ["x__y*"]}, limits: {tool_calls_per_minute: 30}}
`, env())
	a, b := c.Keys[0], c.Keys[1]
	if a.Hash != hashA {
		t.Errorf("got hash %q, want it in lower case", a.Hash)
	}
	if len(a.Models) != 1 || a.Models[0] != "*" {
		t.Errorf("got models %q, want [*] when absent", a.Models)
	}
	if want := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC); !a.ExpiresAt.Equal(want) {
		t.Errorf("got expires_at %v, want %v", a.ExpiresAt, want)
	}
	if want := time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC); !b.ExpiresAt.Equal(want) {
		t.Errorf("got expires_at %v, want %v", b.ExpiresAt, want)
	}
	if a.MCP != nil || b.MCP == nil || b.MCP.Servers[0] != "*" || b.MCP.Tools[0] != "x__y*" || b.Limits.ToolCallsPerMinute != 30 {
		t.Errorf("got mcp %+v and %+v, want none for a, and b's", a.MCP, b.MCP)
	}
	if a.Metadata["team"] != "a" || a.Limits.RPM != 60 || a.Limits.TPM != 10000 {
		t.Errorf("got %+v, want metadata team=a, rpm 60, tpm 10000", a)
	}
	if !c.AuthEnabled() {
		t.Errorf("got auth off, want on with keys listed")
	}
}

func TestKeyValidation(t *testing.T) {
	key := "sk-sluice-hunter2hunter2hunter2hunter2hunter2hunt"
	tests := []struct {
		name, src, want string
	}{
		{"key pasted as hash", "keys: [{name: a, hash: " + key + "}]\n", "keys[0].hash: want the hex SHA-256"},
		{"short hash", "keys: [{name: a, hash: abc}]\n", "keys[0].hash: want the hex SHA-256"},
		{"expires_at", "keys: [{name: a, hash: " + hashA + ", expires_at: tomorrow}]\n", `keys[0].expires_at: invalid timestamp "tomorrow"`},
		{"metadata value", "keys: [{name: a, hash: " + hashA + ", metadata: {k: " + strings.Repeat("v", 513) + "}}]\n", "keys[0].metadata: keys of 1 to 64 bytes"},
		{"mcp server", "tools: {docs: {mcp: {url: 'http://127.0.0.1:1/mcp'}}, web: {http: {url: 'http://127.0.0.1:1/w'}}}\nkeys: [{name: a, hash: " + hashA + ", mcp: {servers: [docs, web]}}]\n", `keys[0].mcp.servers[1]: unknown MCP server "web"`},
		{"mcp tool pattern", "keys: [{name: a, hash: " + hashA + ", mcp: {tools: ['docs__[']}}]\n", `keys[0].mcp.tools[0]: "docs__[" is not a server__tool name or pattern`},
		{"tool calls", "keys: [{name: a, hash: " + hashA + ", limits: {tool_calls_per_minute: -1}}]\n", "keys[0].limits.tool_calls_per_minute: must not be negative"},
		{"redis timeout", "redis: {timeout: 0s}\n", "redis.timeout: must be positive"},
		{"redis spool", "redis: {spool: 0}\n", "redis.spool: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, tt.src, tt.want)
			_, err := ParseWith([]byte(tt.src), "config.yaml", env())
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("got %q, want the key never quoted", err)
			}
		})
	}
}
