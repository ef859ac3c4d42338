package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// uiResume serves GET /v1/ui/chat/{chatId}/stream on any replica: the chat's active run in
// full then live (the AI SDK's resumeStream), or only what follows Last-Event-ID when the
// client sends it (EventSource). 204 when there is nothing to resume: no run, or a finished
// one and no Last-Event-ID (DESIGN §8). Another key's run is a 404.
func (s *Server) uiResume(c echo.Context) error {
	chat := c.Param("chatId")
	if !uistream.ValidChatID(chat) {
		return s.reject(c, oai.Invalid("chatId", "Invalid chat id: 1 to 128 letters, digits, '_', '-', '.' or ':'."))
	}
	rd, err := s.o.UI.Runs.Open(c.Request().Context(), chat, keyID(c), c.Request().Header.Get("Last-Event-ID"))
	if errors.Is(err, runs.ErrNoRun) {
		return c.NoContent(http.StatusNoContent)
	}
	if err != nil {
		return s.reject(c, runs.Public(err))
	}
	defer rd.Close()
	return s.serveRun(c, nil, rd)
}

// uiStop serves POST /v1/ui/chat/{chatId}/stop: the chat's active run is stopped (its
// upstream call canceled) and ends with abort, on whichever replica runs it. 202 with the
// run's id; 204 when no run is active; another key's run is a 404.
func (s *Server) uiStop(c echo.Context) error {
	chat := c.Param("chatId")
	if !uistream.ValidChatID(chat) {
		return s.reject(c, oai.Invalid("chatId", "Invalid chat id: 1 to 128 letters, digits, '_', '-', '.' or ':'."))
	}
	run, err := s.o.UI.Runs.Stop(c.Request().Context(), chat, keyID(c))
	if errors.Is(err, runs.ErrNoRun) {
		return c.NoContent(http.StatusNoContent)
	}
	if err != nil {
		return s.reject(c, runs.Public(err))
	}
	b := append([]byte(`{"object":"ui.run","id":`), oai.AppendString(nil, run)...)
	b = append(b, `,"chat_id":`...)
	b = oai.AppendString(b, chat)
	return c.JSONBlob(http.StatusAccepted, append(b, `,"status":"stopping"}`...))
}
