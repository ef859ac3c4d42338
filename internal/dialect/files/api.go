// Package files is OpenAI's Files API as a client wire (issue 48): upload (multipart,
// streamed), list, get, content and delete, passed through to the target that keeps the
// file by package objects (dialect.Object). Errors in OpenAI's shape.
package files

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// The routes' paths, as package objects tells them apart.
const (
	Path    = "/v1/files"
	One     = "/v1/files/:id"
	Content = "/v1/files/:id/content"
)

// API is the Files wire.
var API = dialect.API{
	Name: "files",
	Routes: dialect.ObjectRoutes(http.MethodPost, Path, http.MethodGet, Path, http.MethodGet, One, http.MethodDelete, One,
		http.MethodGet, Content),
	Credential: dialect.Bearer | dialect.XAPIKey,
	Error:      oai.Error,
}
