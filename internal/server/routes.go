package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/anthropic"
	"github.com/sluice-gw/sluice/internal/dialect/audio"
	"github.com/sluice-gw/sluice/internal/dialect/batches"
	"github.com/sluice-gw/sluice/internal/dialect/chat"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/files"
	"github.com/sluice-gw/sluice/internal/dialect/gemini"
	"github.com/sluice-gw/sluice/internal/dialect/images"
	"github.com/sluice-gw/sluice/internal/dialect/moderations"
	"github.com/sluice-gw/sluice/internal/dialect/msgbatches"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/dialect/realtime"
	"github.com/sluice-gw/sluice/internal/dialect/rerank"
	"github.com/sluice-gw/sluice/internal/dialect/responses"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mcpgw"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// Wires is the route table: every client wire the gateway serves, each a package that
// describes itself in one dialect.API. Adding a wire is adding its package and a line here.
// Every route of it gets the same middleware (register): its wire's error format, CORS and
// the keys; the access line, span and metrics hold for every route of the server. No route
// that names a model exists outside it.
var Wires = []*dialect.API{
	&chat.API,        // POST /v1/chat/completions
	&responses.API,   // POST /v1/responses
	&anthropic.API,   // POST /v1/messages, /v1/messages/count_tokens
	&embeddings.API,  // POST /v1/embeddings
	&moderations.API, // POST /v1/moderations
	&images.API,      // POST /v1/images/generations
	&rerank.API,      // POST /v1/rerank (Cohere/Jina shape)
	&gemini.API,      // POST /v1beta/models/*, /v1/models/* ({model}:generateContent, ...)
	&uistream.API,    // POST /v1/ui/chat, GET .../stream, POST .../stop
	&oai.Models,      // GET /v1/models, /v1/models/*
	&mcpgw.API,       // POST, GET, DELETE /mcp
	&files.API,       // /v1/files: upload, list, get, content, delete (package objects)
	&batches.API,     // /v1/batches: create, list, get, cancel
	&msgbatches.API,  // /v1/messages/batches: create, list, get, cancel, results, delete
	// POST /v1/images/edits, /v1/audio/transcriptions (multipart in), /v1/audio/speech (audio out)
	&images.Edits, &audio.Transcriptions, &audio.Speech,
	&realtime.API, // GET /v1/realtime (a WebSocket: package live)
}

// register adds every route of the table to e, through the wire's middleware: what the
// request's wire is (its errors, Request-Id), CORS, then its key. Each path also answers a
// CORS preflight, which browsers send without the key.
func (s *Server) register(e *echo.Echo) {
	methods := map[string][]string{}
	for _, api := range Wires {
		for _, rt := range api.Routes {
			h := s.opHandler(api, rt.Op)
			e.Add(rt.Method, rt.Path, h, s.wire(api), s.cors, s.gate)
			if methods[rt.Path] == nil {
				s.paths = append(s.paths, wirePath{rt.Path, api})
			}
			methods[rt.Path] = append(methods[rt.Path], rt.Method)
		}
	}
	for _, p := range s.paths {
		allow := strings.Join(append(methods[p.path], http.MethodOptions), ", ")
		e.OPTIONS(p.path, func(c echo.Context) error {
			c.Response().Header().Set("Allow", allow)
			return c.NoContent(http.StatusNoContent)
		}, s.wire(p.api), s.cors)
	}
}

// wirePath is a path of the table and its wire.
type wirePath struct {
	path string
	api  *dialect.API
}

// opHandler is the handler of op on api's routes.
func (s *Server) opHandler(api *dialect.API, op dialect.Op) echo.HandlerFunc {
	switch op {
	case dialect.Resume:
		return s.uiResume
	case dialect.Stop:
		return s.uiStop
	case dialect.List:
		return s.models
	case dialect.Model:
		return s.model
	case dialect.MCP:
		return s.mcp
	case dialect.Kept: // what the wire keeps for the caller's key (a stored response)
		return func(c echo.Context) error {
			in := dialect.Input{Op: op, Param: dialect.PathParams(c.Param, c.Request().URL), Query: c.QueryParam, Method: c.Request().Method, Route: c.Path(),
				State: &s.o.State, Key: reqInfo(c).KeyID}
			return c.JSONBlob(api.Kept(c.Request().Context(), in))
		}
	case dialect.Object, dialect.Realtime: // files and batches, Realtime sessions: Options.Objects, Options.Realtime admit and serve them
		serve := s.o.Objects
		if op == dialect.Realtime {
			serve = s.o.Realtime
		}
		return func(c echo.Context) error {
			return serve(c.Response(), c.Request(), dialect.PathParams(c.Param, c.Request().URL), c.Path(), exchangeOf(c).key, &exchangeOf(c).access, &s.adm, func(err error) error { return s.reject(c, err) })
		}
	}
	return s.modelOp(api, op) // handle.go
}

// wire records the request's wire in its exchange: its errors are the wire's from then on.
func (s *Server) wire(api *dialect.API) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			x := exchangeOf(c)
			x.api, x.access.Wire = api, api.Name
			if api.RequestID != "" {
				c.Response().Header().Set(api.RequestID, x.access.ID)
			}
			c.Response().Header().Set("X-Sluice-Record-Id", x.access.Record) // GET /admin/logs/{id}
			return next(c)
		}
	}
}

// apiOf is the wire whose error format answers for c: the route's, else for a path the table
// does not hold, the wire whose route it extends ("/v1/messages/nothing": Anthropic's), else
// OpenAI's.
func (s *Server) apiOf(c echo.Context) *dialect.API {
	if x, ok := c.Request().Context().Value(exKey(0)).(*exchange); ok && x.api != nil {
		return x.api
	}
	p, best := c.Request().URL.Path, &oai.Models
	n := 0
	for _, wp := range s.paths {
		if (p == wp.path || strings.HasPrefix(p, wp.path+"/")) && len(wp.path) > n {
			best, n = wp.api, len(wp.path)
		}
	}
	return best
}

// gate authenticates the request with its wire's credential when keys are on, and records
// the key in its exchange; admission (the key's models, limits and budget) comes once the
// request is decoded (handle.go).
func (s *Server) gate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.o.Gate.Keys == nil {
			return next(c)
		}
		x := exchangeOf(c)
		key, err := s.o.Gate.Keys.Caller(c.Request().Context(), x.api.Credential.Secret(c.Request()), time.Now())
		if err != nil {
			if x.api.Challenge != "" {
				c.Response().Header().Set("WWW-Authenticate", x.api.Challenge)
			}
			return s.deny(c, admit.AuthError(err, s.o.Gate.FailOpen))
		}
		x.key, x.access.KeyID, x.access.KeyName, x.access.KeyMeta = key, key.ID, key.Name, key.Metadata
		x.access.Capture, x.access.Team = key.Capture, key.Team // capture "": the alias's, else logs.capture
		return next(c)
	}
}

// callerKey is the key a request was authenticated with; nil when auth is off.
func callerKey(c echo.Context) *auth.Key { return exchangeOf(c).key }

// deny answers a refusal of the key (its authentication, its models, its rate limits).
// Unlike writeError it sends no x-should-retry: false: a rate limit or a brief Redis outage
// is worth the SDK's own retry, which honours Retry-After.
func (s *Server) deny(c echo.Context, err error) error {
	reqInfo(c).Kind = llm.KindOf(err)
	if d := dialect.RetryAfter(c.Response().Header(), err); d > 0 {
		c.Response().Header().Set("Retry-After-Ms", strconv.Itoa(int(d.Milliseconds())))
	}
	return c.JSONBlob(s.errorBody(c, err))
}

// exposed are the response headers a browser app may read: who served, the rate limits, and
// the UI stream's marker.
const exposed = "X-Request-Id, X-Sluice-Record-Id, X-Sluice-Target, X-Sluice-Attempts, X-Sluice-Warning, X-Vercel-Ai-Ui-Message-Stream, Retry-After, " +
	"X-Ratelimit-Limit-Requests, X-Ratelimit-Remaining-Requests, X-Ratelimit-Limit-Tokens, X-Ratelimit-Remaining-Tokens"

// cors lets browser apps on cors.allowed_origins call the table's routes (DESIGN §9): none by
// default. It runs before the key, so that a preflight, which browsers send without it, is
// answered here. The key travels in a header, never in a cookie: no credentials mode.
func (s *Server) cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		origin := r.Header.Get("Origin")
		if len(s.o.UI.Origins) == 0 || origin == "" {
			return next(c)
		}
		h := c.Response().Header()
		h.Add("Vary", "Origin")
		if !s.allowedOrigin(origin) {
			return next(c) // no CORS headers: the browser keeps the answer from the page
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
				h.Set("Access-Control-Allow-Headers", rh)
			}
			h.Set("Access-Control-Max-Age", "600")
			return c.NoContent(http.StatusNoContent)
		}
		h.Set("Access-Control-Expose-Headers", exposed)
		return next(c)
	}
}

func (s *Server) allowedOrigin(origin string) bool {
	for _, o := range s.o.UI.Origins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}
