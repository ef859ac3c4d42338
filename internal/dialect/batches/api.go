// Package batches is OpenAI's Batch API as a client wire (issue 48): create, list, get and
// cancel, passed through to the target that keeps the batch's input file by package
// objects (dialect.Object). Errors in OpenAI's shape.
package batches

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// The routes' paths, as package objects tells them apart.
const (
	Path   = "/v1/batches"
	One    = "/v1/batches/:id"
	Cancel = "/v1/batches/:id/cancel"
)

// API is the Batch wire.
var API = dialect.API{
	Name:       "batches",
	Routes:     dialect.ObjectRoutes(http.MethodPost, Path, http.MethodGet, Path, http.MethodGet, One, http.MethodPost, Cancel),
	Credential: dialect.Bearer | dialect.XAPIKey,
	Error:      oai.Error,
}
