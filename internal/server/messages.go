package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/anthropic"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// messages serves POST /v1/messages: the Anthropic Messages API on the same chain, relay and
// event writer as chat, so any adapter serves it; an Anthropic target gets the client's body
// as it came (llm.Request.Native).
func (s *Server) messages(c echo.Context) error {
	c.Response().Header().Set("Request-Id", reqInfo(c).ID)
	chain, run, req, err := s.start(c, func(b []byte) (string, *llm.Request, error) {
		r, err := anthropic.Decode(b, c.Request().Header.Get)
		if err != nil {
			return "", nil, err
		}
		return r.Model, &r.Req, nil
	}, nil)
	if err != nil {
		return s.reject(c, err)
	}
	w := anthropic.NewWire("msg_" + reqInfo(c).ID)
	if req.Stream {
		return s.serveStream(c, chain, run, w)
	}
	return s.serveOnce(c, chain, run, w)
}

// messagesRoute reports whether c is a request of the Messages API, whose errors and
// keepalives are Anthropic's.
func messagesRoute(c echo.Context) bool {
	p := c.Request().URL.Path
	return p == "/v1/messages" || strings.HasPrefix(p, "/v1/messages/")
}

// errorBody is the status and body of err answered before the first byte, in the wire of the
// route: Anthropic's for the Messages API (529 when every target tried was overloaded),
// OpenAI's for every other.
func errorBody(c echo.Context, err error) (int, []byte) {
	if messagesRoute(c) {
		c.Response().Header().Set("Request-Id", reqInfo(c).ID)
		return anthropic.Error(err, anthropic.AllOverloaded(reqInfo(c).Tries))
	}
	return llm.HTTPStatus(err), oai.ErrorBody(err)
}

// countTokens serves POST /v1/messages/count_tokens: an Anthropic target of the alias counts
// (the first that answers), else the gateway estimates, and says so in
// X-Sluice-Token-Count: estimated.
func (s *Server) countTokens(c echo.Context) error {
	c.Response().Header().Set("Request-Id", reqInfo(c).ID)
	body, err := s.readBody(c)
	if err != nil {
		return s.reject(c, err)
	}
	r, err := anthropic.DecodeCount(body, c.Request().Header.Get)
	if err != nil {
		return s.reject(c, err)
	}
	reqInfo(c).Model = r.Model
	chain, err := s.resolve(r.Model)
	if err != nil {
		return s.reject(c, err)
	}
	for t := range chain.All() {
		tc, ok := t.Provider.(tokenCounter)
		if !ok {
			continue
		}
		n, err := tc.CountTokens(c.Request().Context(), &r.Req, t.Model)
		if err == nil {
			c.Response().Header().Set("X-Sluice-Target", t.Name)
			return c.JSONBlob(http.StatusOK, []byte(`{"input_tokens":`+strconv.Itoa(n)+`}`))
		}
		if k := llm.KindOf(err); k == llm.Invalid || k == llm.Canceled {
			return s.reject(c, err) // the client's to change, or gone
		}
	}
	c.Response().Header().Set("X-Sluice-Token-Count", "estimated")
	return c.JSONBlob(http.StatusOK, []byte(`{"input_tokens":`+strconv.Itoa(anthropic.Estimate(r))+`}`))
}

// tokenCounter is a provider that counts the input tokens of a request for model (an
// Anthropic target: its count_tokens endpoint).
type tokenCounter interface {
	CountTokens(ctx context.Context, req *llm.Request, model string) (int, error)
}
