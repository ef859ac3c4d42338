package config

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	lookup := env("A", "alpha", "EMPTY", "", "B_2", "beta")
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "no reference", in: "plain", want: "plain"},
		{name: "set", in: "${A}", want: "alpha"},
		{name: "embedded", in: "x-${A}-${B_2}-y", want: "x-alpha-beta-y"},
		{name: "unset is empty", in: "[${NOPE}]", want: "[]"},
		{name: "default when unset", in: "${NOPE:-dflt}", want: "dflt"},
		{name: "default when empty", in: "${EMPTY:-dflt}", want: "dflt"},
		{name: "default unused", in: "${A:-dflt}", want: "alpha"},
		{name: "required set", in: "${A:?need A}", want: "alpha"},
		{name: "required unset", in: "${NOPE:?set it in .env}", wantErr: "environment variable NOPE is not set: set it in .env"},
		{name: "required empty", in: "${EMPTY:?}", wantErr: "environment variable EMPTY is not set: required"},
		{name: "escape", in: "$${A}", want: "${A}"},
		{name: "double escape", in: "$$$$", want: "$$"},
		{name: "lone dollar", in: "pa$s$", want: "pa$s$"},
		{name: "no braces", in: "$A", want: "$A"},
		{name: "unterminated", in: "${A", wantErr: "unterminated ${"},
		{name: "bad name", in: "${1A}", wantErr: "invalid variable name"},
		{name: "empty name", in: "${}", wantErr: "invalid variable name"},
		{name: "bad operator", in: "${A:=x}", wantErr: "unsupported expansion"},
		{name: "empty operator", in: "${A:}", wantErr: "unsupported expansion"},
		{name: "digit name, empty operator", in: "${0:}", wantErr: "invalid variable name"},
		{name: "not recursive", in: "${R}", want: "${A}"},
	}
	lookup2 := func(k string) (string, bool) {
		if k == "R" {
			return "${A}", true
		}
		return lookup(k)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expand(tt.in, lookup2)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// Expansion happens after parsing: a value that looks like YAML stays one string.
func TestExpandNoInjection(t *testing.T) {
	evil := "x\"}\nlisten: 0.0.0.0:80\nauth: {disabled: true"
	c := mustParse(t, `providers: {p: {kind: sim, headers: {h: "${EVIL}"}}}`, env("EVIL", evil))
	if got := c.Providers["p"].Headers["h"]; got != evil {
		t.Errorf("got header %q, want %q", got, evil)
	}
	if c.Listen != "127.0.0.1:8080" || c.Auth.Disabled {
		t.Errorf("got listen %q disabled %v: the value was parsed as YAML", c.Listen, c.Auth.Disabled)
	}
}

func TestExpandInConfig(t *testing.T) {
	// Only strings expand; a required variable's error names it, its line and message.
	checkErr(t, "listen: ':1'\nauth:\n  admin_token: ${TOKEN:?the admin token}\n",
		"config.yaml:3: auth.admin_token: environment variable TOKEN is not set: the admin token")
	checkErr(t, "runs: {max_rounds: '${N}'}\n", "runs.max_rounds: want an integer, got a string")
	c := mustParse(t, "providers: {sim: {kind: sim}}\nmodels: {d: ['${P}/echo']}\n", env("P", "sim"))
	if got := c.Targets(); len(got) != 1 || got[0] != "sim/echo" {
		t.Errorf("got targets %v, want [sim/echo]", got)
	}
	// Raw JSON schemas are not expanded.
	c = mustParse(t, `guardrails: {g: {stage: output, kind: json_schema, schema: {"$ref": "${X}"}}}`, env("X", "boom"))
	if got := string(c.Guardrails["g"].Schema); got != `{"$ref":"${X}"}` {
		t.Errorf("got schema %s, want it unexpanded", got)
	}
}
