package config

import (
	"strings"
	"testing"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantFail bool
	}{
		{name: "loopback v4", cfg: Config{Listen: "127.0.0.1:8080"}},
		{name: "loopback v6", cfg: Config{Listen: "[::1]:8080"}},
		{name: "localhost", cfg: Config{Listen: "localhost:8080"}},
		{name: "loopback range", cfg: Config{Listen: "127.0.0.2:8080"}},
		{name: "v4-mapped loopback", cfg: Config{Listen: "[::ffff:127.0.0.1]:8080"}},
		{name: "all interfaces", cfg: Config{Listen: ":8080"}, wantFail: true},
		{name: "any v6", cfg: Config{Listen: "[::]:8080"}, wantFail: true},
		{name: "any v4", cfg: Config{Listen: "0.0.0.0:8080"}, wantFail: true},
		{name: "public", cfg: Config{Listen: "10.0.0.1:8080"}, wantFail: true},
		{name: "hostname", cfg: Config{Listen: "gw.internal:8080"}, wantFail: true},
		{name: "disabled", cfg: Config{Listen: ":8080", Auth: Auth{Disabled: true}}},
		{name: "admin token", cfg: Config{Listen: ":8080", Auth: Auth{AdminToken: "t"}}},
		{name: "keys", cfg: Config{Listen: ":8080", Keys: []Key{{Name: "k", Hash: "h"}}}},
		{name: "malformed", cfg: Config{Listen: "nope"}, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.CheckListen()
			if (err != nil) != tt.wantFail {
				t.Errorf("got %v, want failure %v", err, tt.wantFail)
			}
			if err != nil && tt.name != "malformed" && !strings.Contains(err.Error(), "auth.disabled: true") {
				t.Errorf("got %q, want it to say how to opt out", err)
			}
		})
	}
}
