// Package e2e holds no code: its test runs the official OpenAI Node SDK (pinned in
// package.json, installed by the test into node_modules) against a real gateway in front of
// the mock upstream, over loopback, the playground page in Chromium (playwright-core), and
// the reference MCP server (@modelcontextprotocol/server-everything, pinned too) as a local
// server of the gateway over stdio.
package e2e
