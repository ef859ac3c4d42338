// Package mcp is a client of MCP servers over the Streamable HTTP transport (MCP
// specification 2025-06-18, "Transports"). It decides how a session starts (initialize, then
// notifications/initialized) and is kept (Mcp-Session-Id, MCP-Protocol-Version on every later
// request), when it starts again (a POST the server answers 404 with the session's id: the
// server forgot the session), which requests may be sent twice (only one the server answered
// 404: it never ran; a call whose answer was cut may have run and is never repeated), how a
// tool list is read (tools/list, paged) and kept fresh (notifications/tools/list_changed, on
// any stream the server sends, including the GET stream opened when the server announces
// tools.listChanged), and how a tools/call streams its progress notifications (the call's
// progressToken) and its result. A call ended before its result sends
// notifications/cancelled.
//
// A Client is safe for concurrent use; Close ends its session and its listener and waits for
// them. Standard library only, with the gateway's SSE decoder.
package mcp
