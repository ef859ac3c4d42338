// Package e2e holds no code: its test runs the official OpenAI Node SDK (pinned in
// package.json, installed by the test into node_modules) against a real gateway in front of
// the mock upstream, over loopback, and the playground page in Chromium (playwright-core).
package e2e
