package config

import (
	"net/url"
	"slices"
	"strings"
)

// publicParams are header and query names whose values are not secrets: versions, betas and
// the attribution some routers ask for. Masking them would only blur error messages
// ("api-version 2025-04-01-preview is not supported"), and a URL in HTTP-Referer would mask
// every "https://" an upstream writes.
var publicParams = map[string]bool{
	"accept": true, "content-type": true, "user-agent": true,
	"anthropic-version": true, "anthropic-beta": true, "openai-beta": true, "api-version": true,
	"http-referer": true, "referer": true, "x-title": true,
}

// Credentials returns the literal secrets the configuration holds for reaching its
// providers, sorted and without repeats: every api_key, the values of the headers and query
// parameters a provider adds (but those of publicParams), and a password or query value in a
// base_url. The gateway masks them in whatever an upstream writes back (issue 19).
func (c *Config) Credentials() []string {
	var out []string
	add := func(name, v string) {
		if v != "" && !publicParams[strings.ToLower(name)] {
			out = append(out, v)
		}
	}
	for _, p := range c.Providers {
		add("", p.APIKey)
		add("", p.EntraToken)
		add("", p.ClientSecret)
		for k, v := range p.Headers {
			add(k, v)
		}
		for k, v := range p.Query {
			add(k, v)
		}
		if u, err := url.Parse(p.BaseURL); err == nil {
			if pw, ok := u.User.Password(); ok {
				add("", pw)
			}
			for k, vs := range u.Query() {
				for _, v := range vs {
					add(k, v)
				}
			}
		}
	}
	for _, o := range c.Console.OIDC {
		add("", o.ClientSecret)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
