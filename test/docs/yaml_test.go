package docs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
)

// notConfig, on the line directly above a ```yaml fence, says the block is not a gateway
// configuration (a compose file, a Kubernetes manifest, Dex's or Prometheus's configuration).
const notConfig = "<!-- doc-test: not-gateway-config -->"

// forgiven are the errors a partial block may have: a reference to a provider, alias,
// guardrail, tool, team or MCP server the block does not define (the reader's file defines it
// elsewhere), and a ${VAR:?message} whose variable the reader sets.
var forgiven = regexp.MustCompile(`: (target "[^"]*": )?unknown (provider|model alias|guardrail|tool|team|MCP server) "|` +
	`environment variable \w+ is not set`)

// noEnv is the empty environment the blocks are read in: every ${VAR} is empty, so a key
// written ${OPENAI_API_KEY} leaves its provider out, as on a fresh machine.
func noEnv(string) (string, bool) { return "", false }

// checkYAML parses b with the gateway's own parser, config.ParseWith: strictly decoded (an
// unknown key, a wrong type, a bad duration or size fail), then validated (allowed values,
// URLs, regexes, hashes, every other rule of internal/config). Each error is returned as
// file:line, the line of the page, but those forgiven.
func checkYAML(b block) []string {
	if b.info != "yaml" || b.prev == notConfig {
		return nil
	}
	_, err := config.ParseWith([]byte(strings.Join(b.body, "\n")), b.file, noEnv)
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []string
	for _, e := range errs {
		var ce *config.Error
		if !errors.As(e, &ce) {
			out = append(out, fmt.Sprintf("%s:%d: %v", b.file, b.line, e))
			continue
		}
		if forgiven.MatchString(ce.Msg) {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d: %s", b.file, b.line+ce.Line, ce.Msg))
	}
	return out
}

// TestYAMLBlocks decodes every ```yaml block of README.md and docs/**/*.md as a gateway
// configuration, whole or partial at the top level (checkYAML): a partial block is read on
// its own, and only its references to names it does not define are forgiven. A block that is
// not a gateway configuration says so on the line above its fence (notConfig).
func TestYAMLBlocks(t *testing.T) {
	n := 0
	for _, p := range pages(t, root(t)) {
		for _, b := range p.blocks() {
			if b.info == "yaml" && b.prev != notConfig {
				n++
			}
			for _, e := range checkYAML(b) {
				t.Error(e)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no yaml block: the extractor is broken")
	}
}

// TestCheckYAML plants faults in blocks, so TestYAMLBlocks is known to catch them.
func TestCheckYAML(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // "": no error
	}{
		{"partial", "models:\n  default: [openai/gpt-4.1-mini, local/llama3]\n  claude-*: {targets: [sim/echo], guardrails: [no-keys]}", ""},
		{"keys of another file", "keys:\n  - {name: a, hash: " + strings.Repeat("ab", 32) + ", models: [default], team: infra}", ""},
		{"required variable", "auth: {admin_token: \"${SLUICE_ADMIN_TOKEN:?set it}\"}", ""},
		{"unknown key", "models:\n  default:\n    targets: [sim/echo]\n    tiemouts: {first_event: 30s}", `x.md:14: unknown key "tiemouts" in models.default (did you mean "timeouts"?)`},
		{"not the top level", "default: [sim/echo]", `x.md:11: unknown key "default" in the top level`},
		{"wrong type", "limits: {max_body_bytes: 10MiB}", "x.md:11: limits.max_body_bytes: want an integer, got a string"},
		{"bad duration", "heartbeat_interval: 10", `x.md:11: heartbeat_interval: invalid duration "10"`},
		{"bad value", "models:\n  x: {targets: [sim/echo], hosted_tools: refused}", `x.md:12: models.x.hosted_tools: want drop or refuse, got "refused"`},
		{"unknown kind", "providers:\n  p: {kind: opnai}", `x.md:12: providers.p.kind: unknown provider kind "opnai"`},
		{"abbreviated hash", "keys: [{name: a, hash: 9f86d08...}]", "x.md:11: keys[0].hash: want the hex SHA-256"},
		{"two documents", "listen: :8080\n---\nlisten: :9090", "a second document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := checkYAML(block{file: "x.md", line: 10, info: "yaml", body: strings.Split(tt.src, "\n")})
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Errorf("got %q, want no error", errs)
			case tt.want != "" && (len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), tt.want)):
				t.Errorf("got %q, want an error containing %q", errs, tt.want)
			}
		})
	}
	skipped := block{file: "x.md", line: 1, info: "yaml", prev: notConfig, body: []string{"services: {gateway: {}}"}}
	if errs := checkYAML(skipped); len(errs) != 0 {
		t.Errorf("a block marked %s: got %q, want it skipped", notConfig, errs)
	}
}
