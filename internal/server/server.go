package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/mcpgw"
	"github.com/sluice-gw/sluice/internal/presence"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/reqbody"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Options is what the server serves. It is read-only once the server is built.
type Options struct {
	// Chains are the model aliases, by name.
	Chains map[string]*fallback.Chain
	// Plain finds the chain of a model on api's plain endpoint (dialect.API.Upstream), or a 404.
	Plain func(api *dialect.API, model string) (*fallback.Chain, error)
	// Providers serve direct "provider/model" requests, as a chain of one target.
	Providers map[string]fallback.Provider
	// Heartbeat is how long an event stream may stay silent before a keepalive (0: never).
	Heartbeat time.Duration
	// WriteTimeout cuts a client that stops reading (default 30s).
	WriteTimeout time.Duration
	// Timeouts of a direct target.
	Timeouts fallback.Timeouts
	// Models lists, in order, what GET /v1/models shows: the aliases, then direct targets.
	Models                       []string
	MaxBodyBytes, MaxUploadBytes int64 // a body read whole; a multipart upload, streamed (dialect.API.Streamed; 0: 25 MB)
	// BodyTimeout bounds the reading of a whole request body (default 30s): a slower client
	// is answered 408.
	BodyTimeout time.Duration
	// NewWindow, RedactJSON and RedactText are the redaction rules (nil: off).
	NewWindow  func() relay.Window
	RedactJSON func(string) string
	RedactText func(string) string
	// Policies are per-alias options of the relay and the request.
	Policies map[string]Policy
	// Health is shared by every chain, direct targets included (nil: no cooldowns).
	Health fallback.Health
	Log    *slog.Logger
	// Ready reports whether the gateway can serve (nil: always).
	Ready func() error
	// Gate guards /v1 with keys and limits, and serves the admin API (gate.go).
	Gate Gate
	// Telemetry configures spans, metrics and /admin/stats (observe.go); the zero value
	// records through the process's providers.
	Telemetry telemetry.Options
	// Replica names this process in the X-Sluice-Replica header of every answer ("": none).
	Replica string
	// Usage prices calls, keeps the account and enforces budgets (usage.go); Guards are the
	// guardrails (guard.go).
	Usage  Usage
	Guards guard.Catalog
	// UI is frontend runs and CORS (uiopts.go).
	UI UI
	// MCP is the MCP gateway served at /mcp (mcp.go); nil: /mcp answers 404.
	MCP *mcpgw.Gateway
	// Cache is the response cache of the aliases whose Policy has one (cache.go; nil: none).
	Cache *cache.Cache
	// State is what the wires keep between requests (the Responses API's stored responses,
	// dialect.State); the zero value keeps nothing.
	State dialect.State
	// Admin is what the admin API serves beyond the keys, the account, the cache and the
	// statistics: the request log's store (whose records reach it through Telemetry.Record)
	// and the targets' health (admin.API).
	Admin admin.API
	// Objects serves the files and batches (objects.Service.Serve), Realtime the Realtime sessions (live.Service.Serve).
	Objects, Realtime func(http.ResponseWriter, *http.Request, func(string) string, string, *auth.Key, *telemetry.Access, *admit.Policy, func(error) error) error
}

// Policy is what an alias asks of a request beyond its chain.
type Policy struct {
	ThinkFilter bool // <think> spans of the text become reasoning
	RedactInput bool // secrets in the prompt are masked before a provider sees it
	Coalesce    relay.Coalesce
	Cache       *cache.Policy // nil: answers are not cached
	// RefuseHosted: a hosted tool no target can run is refused, not dropped (hosted_tools).
	RefuseHosted bool
}

// Server is the HTTP handler of the gateway. Safe for concurrent use.
type Server struct {
	o    Options
	echo *echo.Echo
	obs  *telemetry.Observer // spans, metrics, statistics (observe.go)
	adm  admit.Policy        // the keys' limits and budgets (limits.go)
	// draining is set by Drain: /readyz fails from then on.
	draining atomic.Bool
	catalog  *fallback.Catalog // finds the chain of a request's model (Options.Plain: on a plain endpoint)
	// paths are the route table's paths and their wires (routes.go).
	paths []wirePath
}

// ConnContext is the http.Server hook (http.Server.ConnContext) that lets the server tell a
// client that half-closed its connection after a complete request from one that left
// (package presence). Without it an EOF on the read side counts as a departure, as in
// net/http.
var ConnContext = presence.ConnContext

var nosniff = []string{"nosniff"} // X-Content-Type-Options of every answer: one slice for all, not one each

// Drain makes /readyz fail from now on, so load balancers stop sending new requests while
// the process lets its open streams finish (SIGTERM; the caller then shuts the listener).
func (s *Server) Drain() { s.draining.Store(true) }

// New builds the server and its routes.
func New(o Options) *Server {
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 10 << 20
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.Plain == nil { // no plain endpoint: every model of one is unknown
		o.Plain = func(_ *dialect.API, m string) (*fallback.Chain, error) { return (&fallback.Catalog{}).Resolve(m) }
	}
	s := &Server{o: o, echo: echo.New(), obs: observer(o),
		adm: admit.Policy{Limiter: o.Gate.Limiter, Window: o.Gate.Window, Budgets: o.Usage.Budgets, Prices: o.Usage.Prices,
			Store: o.Usage.Store, Guards: o.Guards, Teams: o.Gate.Teams}}
	if s.o.UI.Runs == nil {
		s.o.UI.Runs = runs.NewManager(runs.Options{Log: o.Log})
	}
	s.catalog = fallback.NewCatalog(o.Chains, o.Providers, o.Health, o.Log, o.Timeouts)
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.httpError
	// The access line, span and metrics hold for every route; the wires' own middleware
	// (keys, CORS, their error format) for every route of the table (routes.go).
	e.Use(s.access, s.recover)
	s.register(e)
	e.GET("/healthz", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, []byte(`{"status":"ok"}`)) })
	e.GET("/readyz", s.readyz)
	s.adminRoutes(e)
	s.observeRoutes(e)
	s.playgroundRoutes(e) // playground.go: the web page at /
	return s
}

// observer is the telemetry of o: its models are the metrics' labels unless it names them.
func observer(o Options) *telemetry.Observer {
	to := o.Telemetry
	if to.Models == nil {
		to.Models = o.Models
	}
	return telemetry.NewObserver(to, o.Gate.Shared)
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// exchange is one request as the edge serves it, from the access middleware on: its access
// record (what its log line, span and statistics say, filled by the handlers), the key it was
// authenticated with (nil with auth off), and on model routes its admission ticket. It belongs to the
// request's goroutine; a frontend run, which may outlive the handler, gets copies.
type exchange struct {
	access telemetry.Access
	api    *dialect.API // the route's wire (routes.go); nil off the table
	key    *auth.Key
	ticket *admit.Ticket // its admission and account, on model routes (handle.go)
	ew     *sse.Writer   // its event stream, once started (edge.Stream)
	edge   edge          // its side of the rounds and the cache (Server.edge)
}

type exKey int // the request context's key of its exchange: exKey(0)

// exchangeOf is the request's exchange; the access middleware, first of all, sets it.
func exchangeOf(c echo.Context) *exchange { return c.Request().Context().Value(exKey(0)).(*exchange) }

// reqInfo is the request's access record.
func reqInfo(c echo.Context) *telemetry.Access { return &exchangeOf(c).access }

// access assigns the request id and writes one log line per request: never a key, a prompt
// or a completion.
func (s *Server) access(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		// The handlers' context ends when the client left, not at a half-close (presence).
		ctx, w, stop := presence.Watch(c.Request(), c.Response().Writer)
		defer stop() // before the abort below, and before net/http writes after the handler
		c.Response().Writer = w
		id, rec := telemetry.RequestIDs(c.Request().Header.Get("X-Request-Id")) // the client's, and its record's (issue 47)
		x := &exchange{access: telemetry.Access{ID: id, Record: rec, Start: start, UserAgent: c.Request().UserAgent()}}
		c.SetRequest(c.Request().WithContext(context.WithValue(ctx, exKey(0), x))) // not echo's Set: a map per request
		in := &x.access
		c.Response().Header().Set("X-Request-Id", in.ID)
		c.Response().Header()["X-Content-Type-Options"] = nosniff // no answer is taken for a page or a script (issue 47)
		if s.o.Replica != "" {
			c.Response().Header().Set("X-Sluice-Replica", s.o.Replica)
		}
		end := s.observe(c, in) // the span, metrics and statistics, ended once in is complete
		if err := next(c); err != nil {
			c.Error(err)
		}
		r := c.Request()
		in.Method, in.Path, in.Status, in.Duration = r.Method, r.URL.Path, c.Response().Status, time.Since(start)
		end()
		telemetry.LogAccess(r.Context(), s.o.Log, in)
		if in.Status == 499 && !c.Response().Committed {
			// The client left before the answer: close the connection without one, rather
			// than let net/http send an empty 200 that the log would contradict.
			panic(http.ErrAbortHandler)
		}
		return nil
	}
}

// recover turns a panic into a 500 (or a cut stream) and a log line, never a crash.
func (s *Server) recover(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.o.Log.Error("panic", "id", reqInfo(c).ID, "panic", p)
				err = errors.New("panic")
			}
		}()
		return next(c)
	}
}

func (s *Server) readyz(c echo.Context) error {
	if s.draining.Load() {
		return c.JSONBlob(http.StatusServiceUnavailable, []byte(`{"status":"draining"}`))
	}
	if s.o.Ready != nil {
		if err := s.o.Ready(); err != nil {
			return c.JSONBlob(http.StatusServiceUnavailable, []byte(`{"status":"unavailable"}`))
		}
	}
	if body, status := s.sharedReady(c.Request().Context()); body != nil {
		return c.JSONBlob(status, body)
	}
	return c.JSONBlob(http.StatusOK, []byte(`{"status":"ready"}`))
}

// readBody reads the body within limits.max_body_bytes and limits.body_timeout
// (reqbody.Read).
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	if api := exchangeOf(c).api; api != nil && api.Streamed {
		return nil, nil // its wire reads it, streamed (dialect.Input.Body)
	}
	return reqbody.Read(c.Response(), c.Request(), s.o.MaxBodyBytes, s.o.BodyTimeout)
}

// trailers are the headers an event stream learns at commit: a keepalive that sent the
// headers earlier declares them as trailers.
var trailers = []string{"X-Sluice-Target", "X-Sluice-Attempts"}

// newEventWriter is the event stream of c's response, with the server's heartbeat and write
// deadline, and the trailers tr (edge.Stream).
func (s *Server) newEventWriter(c echo.Context, tr []string) *sse.Writer {
	api := s.apiOf(c)
	o := sse.WriterOptions{Heartbeat: s.o.Heartbeat, WriteTimeout: s.o.WriteTimeout, Trailers: tr,
		Keepalive: api.Keepalive, ContentType: api.ContentType(c.QueryParam)}
	return sse.NewWriter(c.Response(), o)
}
