package config

import (
	"strings"
	"testing"
	"time"
)

func TestLogs(t *testing.T) {
	c := mustParse(t, `logs: {url: "sqlite://./data/logs.db", retention: 7d, capture: content, queue: 50}
keys:
  - {name: k, hash: `+strings.Repeat("ab", 32)+`, capture: metadata}
`, env())
	if c.Logs.URL != "sqlite://./data/logs.db" || c.Logs.Retention.Std() != 7*24*time.Hour || c.Logs.Capture != "content" ||
		c.Logs.Queue != 50 || c.Logs.MaxContentBytes != 32<<10 || c.Keys[0].Capture != "metadata" {
		t.Errorf("got %+v, key capture %q", c.Logs, c.Keys[0].Capture)
	}
	if c := mustParse(t, `logs: {url: "postgres://u:pw@db/logs"}`, env()); c.Logs.URL == "" {
		t.Error("a postgres URL was dropped")
	}
	for _, tt := range []struct{ src, want string }{
		{`logs: {url: "mysql://u:secretpw@db/x"}`, "logs.url: want sqlite://"},
		{`logs: {url: "sqlite://"}`, "logs.url"},
		{`logs: {capture: all}`, `logs.capture: want metadata or content, got "all"`},
		{`logs: {retention: 0s}`, "logs.retention"},
		{`logs: {retention: xd}`, "logs.retention: invalid duration"},
		{`logs: {queue: -1}`, "logs.queue"},
		{`logs: {nope: 1}`, "nope"},
		{"models:\n  a: {targets: [sim/echo], capture: everything}\nproviders: {sim: {kind: sim}}", "models.a.capture"},
	} {
		checkErr(t, tt.src, tt.want)
	}
	// The URL may carry a password: an error never quotes it.
	_, err := ParseWith([]byte(`logs: {url: "mysql://u:secretpw@db/x"}`), "c.yaml", env())
	if err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("got %v, want an error that does not quote the URL", err)
	}
}
