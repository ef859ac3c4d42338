// Package config decides what the gateway is told to do: it reads the one YAML file (or the
// embedded default), decodes it strictly, expands ${ENV} references in string values, fills
// the defaults that make every block optional, validates every reference, and prunes the
// providers that cannot be used (no API key) from every chain, with a warning.
//
// Every error names the file and line it comes from. Nothing here logs: warnings are returned
// in Config.Warnings for the caller to log, and no error or warning ever carries a secret
// value (an API key, a header value, a Redis URL).
//
// A *Config is built once at start and read-only afterwards: safe for concurrent reads.
package config
