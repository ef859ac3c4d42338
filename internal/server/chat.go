package server

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/chat"
	"github.com/sluice-gw/sluice/internal/llm"
)

// chat serves POST /v1/chat/completions.
func (s *Server) chat(c echo.Context) error {
	chain, run, req, err := s.start(c, func(b []byte) (string, *llm.Request, error) {
		cr, err := chat.Decode(b)
		if err != nil {
			return "", nil, err
		}
		return cr.Model, &cr.Req, nil
	}, nil)
	if err != nil {
		return s.reject(c, err)
	}
	w := chat.NewWire("chatcmpl-"+reqInfo(c).ID, time.Now().Unix(), req.IncludeUsage)
	if req.Stream {
		return s.serveStream(c, chain, run, w)
	}
	return s.serveOnce(c, chain, run, w)
}
