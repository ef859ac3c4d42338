// Package auth decides who a caller is and what it may call: virtual keys (sk-sluice-...),
// stored as the SHA-256 of the key and never in clear, each with the model aliases it may
// use, its rate limits, expiry and metadata. Keys come from the configuration file (read-only)
// and from a Store (in memory, or Redis through package redisstore) that the admin API edits.
package auth
