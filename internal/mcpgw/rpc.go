package mcpgw

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/tools/mcp"
)

// message and rpcError are JSON-RPC 2.0 messages and errors, as package mcp (the client
// side) reads and writes them.
type (
	message  = mcp.Message
	rpcError = mcp.RPCError
)

// JSON-RPC error codes: the standard ones, and the gateway's own (the -32000 to -32099
// range JSON-RPC leaves to servers; documented in docs/mcp-gateway.md).
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeSession        = -32001 // the session is missing, unknown or expired
	codeRefused        = -32003 // an input guardrail refused the call's arguments
	codeUnavailable    = -32004 // the gateway's shared state (Redis) could not be reached
	codeLimited        = -32029 // a rate limit of the key (rpm, tool_calls_per_minute)
)

// validID reports whether id is a JSON-RPC request id MCP allows: a string or a number
// (never null).
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case c == '-' || c >= '0' && c <= '9':
		var n json.Number
		return json.Unmarshal(id, &n) == nil
	}
	return false
}

func response(id json.RawMessage, result any) []byte {
	r, err := json.Marshal(result)
	if err != nil {
		r = []byte(`{}`)
	}
	return encode(message{ID: id, Result: r})
}

func errorResponse(id json.RawMessage, code int, msg string, data any) []byte {
	e := &rpcError{Code: code, Message: msg}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	if len(id) == 0 {
		id = json.RawMessage("null") // an error about a message whose id could not be read
	}
	return encode(message{ID: id, Error: e})
}

func notification(method string, params any) []byte {
	m := message{Method: method}
	if params != nil {
		m.Params, _ = json.Marshal(params)
	}
	return encode(m)
}

func encode(m message) []byte {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		// Only raw members can fail, and they are valid JSON read or made here.
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"encoding failed"}}`)
	}
	return b
}
