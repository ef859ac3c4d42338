// Package mcp is a client of MCP servers (MCP specification 2025-06-18), over the Streamable
// HTTP transport (http.go) or the stdio transport of a local server whose process the client
// starts, restarts with a backoff when it exits, and stops on Close (stdio.go). It decides
// how a session starts (initialize, then notifications/initialized) and is kept
// (Mcp-Session-Id, MCP-Protocol-Version on every later request over HTTP; the process's
// lifetime over stdio), when it starts again (the server forgot it: an HTTP 404, or a 400
// that says so, to a request that carried its id; a new process), which requests may be
// sent twice (only one the server refused unrun for its session; a call whose answer was
// cut, timed out, or whose process died may have run and is never repeated), how a tool list
// is read (tools/list, paged) and kept fresh (notifications/tools/list_changed, on any
// stream the server sends, including the GET stream opened when the server announces
// tools.listChanged), and how a tools/call streams its progress notifications (the call's
// progressToken) and its result. A call ended before its result sends
// notifications/cancelled.
//
// A Client is safe for concurrent use; Close ends its session, its process and its
// goroutines and waits for them. Standard library only, with the gateway's SSE decoder.
package mcp
