package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// models lists aliases and direct targets in OpenAI's list format.
func (s *Server) models(c echo.Context) error {
	b := []byte(`{"object":"list","data":[`)
	for i, m := range s.o.Models {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendModel(b, m)
	}
	b = append(b, "]}"...)
	return c.JSONBlob(http.StatusOK, b)
}

func (s *Server) model(c echo.Context) error {
	name := strings.TrimPrefix(c.Request().URL.Path, "/v1/models/")
	for _, m := range s.o.Models {
		if m == name {
			return c.JSONBlob(http.StatusOK, appendModel(nil, m))
		}
	}
	_, err := s.resolve(name)
	if err != nil {
		return writeError(c, err)
	}
	return c.JSONBlob(http.StatusOK, appendModel(nil, name))
}

func appendModel(b []byte, m string) []byte {
	b = append(b, `{"id":`...)
	b = oai.AppendString(b, m)
	b = append(b, `,"object":"model","created":0,"owned_by":"sluice"}`...)
	return b
}
