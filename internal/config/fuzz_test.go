package config

import (
	"os"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that a config it accepts has every
// alias with at least one target.
func FuzzParse(f *testing.F) {
	design, err := os.ReadFile("testdata/design.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{design, defaultYAML,
		[]byte("models: {d: [{group: [a/b], weights: [1, 2]}]}"),
		[]byte("a: &a [*a]\n"),
		[]byte("listen: ${X:?y}\nheartbeat_interval: -1s\n"),
		[]byte("guardrails: {g: {stage: output, kind: json_schema, schema: {1: 2}}}"),
	} {
		f.Add(s)
	}
	lookup := env("OPENAI_API_KEY", "k", "X", "x")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseWith(data, "fuzz.yaml", lookup)
		if err != nil {
			return
		}
		for name, a := range c.Models {
			if len(a.Targets) == 0 {
				t.Errorf("alias %q has no targets", name)
			}
		}
		_ = c.CheckListen()
		_ = c.Targets()
	})
}
