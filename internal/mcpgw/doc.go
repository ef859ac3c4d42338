// Package mcpgw is the gateway's MCP server (issue 25): one Streamable HTTP endpoint (MCP
// 2025-06-18, and the versions the current SDKs negotiate) in front of every configured MCP
// server. It decides the protocol of the client side: initialize and the version agreed,
// the Mcp-Session-Id sessions (kept in a Store: Redis for a fleet, so that any replica serves
// any request of a session; memory otherwise) and whose key they belong to, tools/list as the
// union of the servers' tools a caller may use, named server__tool, tools/call routed to its
// server (progress passed on with the caller's progressToken; notifications/cancelled passed
// on as a cancellation of the upstream call; the result, structuredContent and errors as the
// server sent them, through the redaction rules), ping, and the GET stream that carries
// notifications/tools/list_changed. The upstream side (sessions with the servers, their
// credentials, their filters) is package tools; the edge (keys, limits, guardrails) hands a
// Caller to Serve.
//
// A Gateway is safe for concurrent use. Standard library only, with the gateway's SSE writer.
package mcpgw
