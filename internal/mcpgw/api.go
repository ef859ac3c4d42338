package mcpgw

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// API is the MCP gateway's place in the route table: /mcp over Streamable HTTP, with the
// same virtual keys as /v1. A refused key is answered in OpenAI's format with a Bearer
// challenge, without OAuth metadata: clients send the key as a header they were configured
// with, rather than start an authorization flow.
var API = dialect.API{
	Name: "mcp",
	Routes: []dialect.Route{
		{Method: http.MethodPost, Path: "/mcp", Op: dialect.MCP},
		{Method: http.MethodGet, Path: "/mcp", Op: dialect.MCP},
		{Method: http.MethodDelete, Path: "/mcp", Op: dialect.MCP},
	},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Error:      oai.Error,
	Challenge:  `Bearer realm="sluice"`,
}
