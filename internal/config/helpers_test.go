package config

import (
	"strings"
	"testing"
)

// env is a lookup over a fixed environment.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// checkErr checks that parsing src fails with an error containing want.
func checkErr(t *testing.T, src, want string) {
	t.Helper()
	c, err := ParseWith([]byte(src), "config.yaml", env())
	if err == nil {
		t.Fatalf("got config %+v, want error containing %q", c, want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got error:\n%v\nwant it to contain %q", err, want)
	}
}

func mustParse(t *testing.T, src string, lookup func(string) (string, bool)) *Config {
	t.Helper()
	c, err := ParseWith([]byte(src), "config.yaml", lookup)
	if err != nil {
		t.Fatalf("got error:\n%v\nwant none", err)
	}
	return c
}
