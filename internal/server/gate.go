package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/jsonscan"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Gate guards /v1 (DESIGN §6): who may call (virtual keys), which models, how often (rate
// limits). The zero value lets every caller through: auth is off.
type Gate struct {
	// Keys authenticates callers; nil: auth off.
	Keys *auth.Keys
	// Limiter enforces the keys' rpm and tpm; nil: no limits.
	Limiter limit.Limiter
	// Window is the span of rpm and tpm: a minute (tests lengthen it so that nothing leaves
	// the window while they count).
	Window time.Duration
	// AdminToken turns the admin API on; empty: /admin/ is not served.
	AdminToken string
	// Shared is the shared state /readyz reports on; nil: in-memory state.
	Shared Shared
	// FailOpen is redis.on_failure: open (/readyz stays 200 while Redis is down).
	FailOpen bool
	// Closer releases the shared state's connections at Server.Close; nil: nothing to close.
	Closer io.Closer
}

// Shared is the shared state as readiness sees it.
type Shared interface {
	Ping(ctx context.Context) error
}

// Close releases the gate's connections (Redis). The server must not serve after it.
func (s *Server) Close() error {
	_ = s.o.UI.Runs.Close() // runs first: they write their end to the store
	if s.o.MCP != nil {
		_ = s.o.MCP.Close() // its subscription to the other replicas' cancellations
	}
	if s.o.UI.Tools.Set != nil {
		_ = s.o.UI.Tools.Set.Close() // no run is left to call a tool
	}
	if s.obs.fleet != nil {
		s.obs.fleet.Close() // no more statistics to publish: the store closes
	}
	if s.o.Gate.Closer != nil {
		return s.o.Gate.Closer.Close()
	}
	return nil
}

// callerKey is the key a request was authenticated with; nil when auth is off.
func callerKey(c echo.Context) *auth.Key { return exchangeOf(c).key }

// gate authenticates every /v1 request and, for a request that names a model, checks that
// the key may use it and reserves its rate limits, reconciled once the handler is done.
// It is server-wide middleware rather than per route, so that no /v1 route can miss it.
func (s *Server) gate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.o.Gate.Keys == nil || !strings.HasPrefix(r.URL.Path, "/v1/") {
			return next(c)
		}
		secret := auth.FromRequest(r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		key, err := s.o.Gate.Keys.Authenticate(r.Context(), secret, time.Now())
		if err != nil {
			return s.deny(c, authError(err, s.o.Gate.FailOpen))
		}
		in := reqInfo(c)
		in.KeyID, in.KeyName = key.ID, key.Name
		exchangeOf(c).key = key
		if r.Method != http.MethodPost {
			return next(c)
		}
		body, err := s.readBody(c)
		if err != nil {
			return s.reject(c, err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p := peek(body)
		if p.model == "" {
			return next(c) // not a model call, or a body the handler refuses with a 400
		}
		if !key.Allows(p.model) {
			return s.deny(c, &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Param: "model",
				Code: "model_not_allowed", Type: "invalid_request_error",
				Message: "This API key is not allowed to use the model '" + p.model + "'."})
		}
		rsv, err := s.reserve(c, key, p.cost(r.URL.Path, len(body), key.TPM))
		if err != nil {
			return s.deny(c, err)
		}
		if err := next(c); err != nil {
			c.Error(err)
		}
		s.reconcile(c, key, rsv)
		return nil
	}
}

// authError is what a client is told about its key: never the key, nor whether a hash
// matched something.
func authError(err error, failOpen bool) error {
	e := &llm.Error{Kind: llm.Unauthenticated, Code: "invalid_api_key", Type: "invalid_request_error"}
	switch {
	case errors.Is(err, auth.ErrMissing):
		e.Message = "You didn't provide an API key. Send it as 'Authorization: Bearer KEY' or in the x-api-key header."
	case errors.Is(err, auth.ErrInvalid):
		e.Message = "Incorrect API key provided."
	case errors.Is(err, auth.ErrExpired):
		e.Message = "The API key has expired."
	case failOpen:
		// Serving on without Redis covers the keys this replica saw lately, not this one.
		return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
			Type: "server_error", Message: "The gateway cannot reach its key store (Redis) to check this API key. Retry shortly."}
	default:
		return stateUnavailable()
	}
	return e
}

// stateUnavailable is the 503 of a request the shared state (Redis) could not check.
func stateUnavailable() error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: "The gateway cannot reach its shared state (Redis) to check the API key " +
			"or its rate limits, and is configured to refuse requests meanwhile (redis.on_failure: closed). Retry shortly."}
}

// deny answers a refusal of the gate before any handler ran. Unlike writeError it sends no
// x-should-retry: false: a rate limit or a brief Redis outage is worth the SDK's own retry,
// which honours Retry-After.
func (s *Server) deny(c echo.Context, err error) error {
	reqInfo(c).Kind = llm.KindOf(err)
	var le *llm.Error
	if errors.As(err, &le) && le.RetryAfter > 0 {
		h := c.Response().Header()
		h.Set("Retry-After", strconv.Itoa(int((le.RetryAfter+time.Second-1)/time.Second)))
		h.Set("Retry-After-Ms", strconv.Itoa(int(le.RetryAfter.Milliseconds())))
	}
	return c.JSONBlob(llm.HTTPStatus(err), oai.ErrorBody(err))
}

// peeked is what the gate reads of a body before the handler decodes it.
type peeked struct {
	model     string
	maxTokens int64 // max_completion_tokens, max_tokens or max_output_tokens; 0: not given
	n         int64
}

// peek reads the top-level members the gate needs. Members are matched exactly, as the
// handlers match them (encoding/json alone would also take "MODEL" for "model", and let a
// body name one model to the gate and another to the handler). The body is walked without
// decoding it (the handler decodes it next); a body with escapes or non-ASCII bytes in a
// member's name goes to encoding/json, which unescapes them.
func peek(body []byte) peeked {
	var m struct{ model, maxc, max, maxo, n []byte }
	s := jsonscan.New(body)
	if s.Peek() != '{' {
		return peekSlow(body)
	}
	s.Advance()
	for first := true; ; first = false {
		k, end, ok := s.Member(first)
		if !ok {
			return peekSlow(body)
		}
		if end {
			break
		}
		v, ok := s.Value()
		if !ok {
			return peekSlow(body)
		}
		switch string(k) { // the last of duplicate members wins, as in a map
		case "model":
			m.model = v
		case "max_completion_tokens":
			m.maxc = v
		case "max_tokens":
			m.max = v
		case "max_output_tokens":
			m.maxo = v
		case "n":
			m.n = v
		}
	}
	if s.WS(); !s.Done() {
		return peekSlow(body)
	}
	return peekValues(m.model, [3][]byte{m.maxc, m.max, m.maxo}, m.n)
}

// peekSlow is peek through encoding/json, for the bodies peek leaves to it.
func peekSlow(body []byte) peeked {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return peeked{}
	}
	return peekValues(m["model"], [3][]byte{m["max_completion_tokens"], m["max_tokens"], m["max_output_tokens"]}, m["n"])
}

// peekValues decodes the members peek found (nil: absent); a value of the wrong type is
// ignored.
func peekValues(model []byte, maxTokens [3][]byte, n []byte) peeked {
	var p peeked
	if len(model) > 1 && model[0] == '"' && bytes.IndexByte(model, '\\') < 0 && utf8.Valid(model) {
		p.model = string(model[1 : len(model)-1])
	} else if model != nil {
		_ = json.Unmarshal(model, &p.model)
	}
	for _, v := range maxTokens {
		if v != nil && json.Unmarshal(v, &p.maxTokens) == nil && p.maxTokens > 0 {
			break
		}
	}
	if n != nil {
		_ = json.Unmarshal(n, &p.n)
	}
	return p
}

// defaultOutputTokens is reserved for the answer of a request that sets no max_tokens; the
// reservation is reconciled with the real usage after the call.
const defaultOutputTokens = 512

// cost estimates the tokens of a call before it is made: the prompt at about four bytes a
// token (the body's JSON included, so it errs high), plus the answer's max_tokens for each of
// n choices. Without max_tokens, the default is capped at the key's limit, so that a small
// limit does not refuse every such request as too large.
func (p peeked) cost(path string, bodyLen int, tpm int64) int64 {
	prompt := int64(bodyLen+3) / 4
	if strings.HasSuffix(path, "/embeddings") {
		return prompt
	}
	out := p.maxTokens
	capped := out <= 0
	if capped {
		out = defaultOutputTokens
	}
	total := prompt + out*min(max(p.n, 1), 128)
	if capped && tpm > 0 {
		total = max(min(total, tpm), prompt)
	}
	return total
}

// sharedReady is /readyz's answer when Redis is down, nil when it is up (or not used).
// Under open the gateway still serves, degraded, and stays in the load balancer: a
// fleet-wide 503 would be a full outage (DESIGN §6); under closed it refuses requests, and
// says so.
func (s *Server) sharedReady(ctx context.Context) ([]byte, int) {
	g := &s.o.Gate
	if g.Shared == nil || g.Shared.Ping(ctx) == nil {
		return nil, 0
	}
	if g.FailOpen {
		return []byte(`{"status":"degraded","redis":"unreachable","on_failure":"open"}`), http.StatusOK
	}
	return []byte(`{"status":"unavailable","redis":"unreachable","on_failure":"closed"}`), http.StatusServiceUnavailable
}
