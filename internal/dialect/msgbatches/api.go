// Package msgbatches is Anthropic's Message Batches API as a client wire (issue 48):
// create, list, get, cancel, results and delete, passed through to the Anthropic target of
// the batch's model by package objects (dialect.Object). The Anthropic SDKs' credential
// (x-api-key) and errors in Anthropic's shape.
package msgbatches

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/anthropic"
	"github.com/sluice-gw/sluice/internal/llm"
)

// The routes' paths, as package objects tells them apart.
const (
	Path    = "/v1/messages/batches"
	One     = "/v1/messages/batches/:id"
	Cancel  = "/v1/messages/batches/:id/cancel"
	Results = "/v1/messages/batches/:id/results"
)

// API is the Message Batches wire.
var API = dialect.API{
	Name: "message batches",
	Routes: dialect.ObjectRoutes(http.MethodPost, Path, http.MethodGet, Path, http.MethodGet, One, http.MethodDelete, One,
		http.MethodPost, Cancel, http.MethodGet, Results),
	Credential: dialect.Bearer | dialect.XAPIKey,
	Error:      func(err error, _ []llm.Attempt) (int, []byte) { return anthropic.Error(err, false) },
	RequestID:  "Request-Id",
}
