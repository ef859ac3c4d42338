package oai

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
)

// Models is the model list of the OpenAI API (GET /v1/models, GET /v1/models/{id}): the
// aliases and direct targets the gateway serves, in OpenAI's list format (AppendModel).
var Models = dialect.API{
	Name: "models",
	Routes: []dialect.Route{
		{Method: http.MethodGet, Path: "/v1/models", Op: dialect.List},
		{Method: http.MethodGet, Path: "/v1/models/*", Op: dialect.Model},
	},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Error:      Error,
	Listed:     List,
	Described:  func(m string) []byte { return AppendModel(nil, m) },
}

// List is the body of GET /v1/models: the models in OpenAI's list format.
func List(models []string) []byte {
	b := []byte(`{"object":"list","data":[`)
	for i, m := range models {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendModel(b, m)
	}
	return append(b, "]}"...)
}

// AppendModel appends model m as an entry of the list.
func AppendModel(b []byte, m string) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, m)
	return append(b, `,"object":"model","created":0,"owned_by":"sluice"}`...)
}
