// Package docs holds no code: its tests keep the documentation true. Every ```yaml block of
// README.md and docs/**/*.md is decoded as a gateway configuration, every curl of the README's
// sh blocks runs against the gateway on its embedded default (what make run starts), and
// every relative link and #anchor between the pages resolves. The configuration reference,
// docs/configuration.md, is held against the config types by internal/config's own test
// (reference_test.go), which can see the decoder's shapes.
package docs
