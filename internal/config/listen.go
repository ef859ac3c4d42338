package config

import (
	"fmt"
	"net"
	"strings"
)

// CheckListen refuses a configuration that would serve without auth beyond this machine:
// with no keys and no admin token, the gateway listens on loopback only, unless
// auth.disabled says explicitly that serving without auth is intended (DESIGN §6).
func (c *Config) CheckListen() error {
	if c.AuthEnabled() || c.Auth.Disabled {
		return nil
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("listen %q: %w", c.Listen, err)
	}
	if isLoopback(host) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without auth: configure keys or auth.admin_token, or set auth.disabled: true", c.Listen)
}

// LoopbackOnly reports whether the gateway listens on this machine's loopback only.
func (c *Config) LoopbackOnly() bool {
	host, _, err := net.SplitHostPort(c.Listen)
	return err == nil && isLoopback(host)
}

// isLoopback is conservative: an empty host is every interface, and a name other than
// localhost may resolve anywhere.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
