package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Usage is the account of the server (DESIGN §6): what each call cost and who spent it. The
// zero value keeps no account and enforces no budget.
type Usage struct {
	// Prices prices the targets; nil: the built-in table.
	Prices *usage.Prices
	// Store records the account per key, alias, target and day; nil: not recorded.
	Store usage.Store
	// Budgets enforces the keys' budgets; nil: none.
	Budgets usage.Budgets
}

// meter is the account of one request as it is served: the usage and cost of its rounds (and
// of attempts that failed after producing output), its budget reservations, and what the
// output guardrails need. The request's goroutine owns it.
type meter struct {
	start   time.Time
	req     *llm.Request
	prompt  int // the prompt's estimated tokens, for usage a provider did not report
	usage   llm.Usage
	cost    int64 // nano-USD
	target  string
	budgets []usage.Reservation
	guards  guard.Set
	charged bool // some round was charged (its usage reported or estimated)
}

// meterOf is the request's meter; nil outside the model routes.
func meterOf(c echo.Context) *meter { return exchangeOf(c).meter }

// account meters every model call of /v1: after the handler, it settles the key's budget
// reservations with the real cost and records the request in the account. It runs inside
// the gate (gate.go), so a request the gate refused is not accounted for.
func (s *Server) account(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/") {
			return next(c)
		}
		m := &meter{start: time.Now()}
		exchangeOf(c).meter = m
		if err := next(c); err != nil {
			c.Error(err)
		}
		in := reqInfo(c)
		if !m.charged && in.Usage != nil && in.Target != "" {
			// A handler that reports usage without metered rounds (a frontend run).
			_, model, _ := strings.Cut(in.Target, "/")
			s.charge(m, in.Target, model, llm.Usage{PromptTokens: in.Usage.Prompt, CompletionTokens: in.Usage.Completion,
				TotalTokens: in.Usage.Total, Estimated: in.Usage.Estimated})
		}
		in.CostUSD = usage.USD(m.cost) // the access line and the server span carry it
		// The client may have left: the accounting still happens.
		ctx := context.WithoutCancel(r.Context())
		s.settleBudgets(ctx, m)
		s.record(ctx, c, m)
		return nil
	}
}

// record adds the request to the account: a model call that reached a handler.
func (s *Server) record(ctx context.Context, c echo.Context, m *meter) {
	in := reqInfo(c)
	if s.o.Usage.Store == nil || in.Model == "" {
		return
	}
	n := usage.Counts{Requests: 1, InputTokens: int64(m.usage.PromptTokens), OutputTokens: int64(m.usage.CompletionTokens),
		CachedTokens: int64(m.usage.CachedTokens), CostNano: m.cost}
	switch in.Kind {
	case llm.Canceled: // the client left: not an error of the call
	case llm.KindNone:
		if c.Response().Status >= 400 {
			n.Errors = 1
		}
	default:
		n.Errors = 1
	}
	if in.Attempts > 1 {
		n.Fallbacks = 1
	}
	if m.usage.Estimated {
		n.Estimated = 1
	}
	target := m.target
	if target == "" {
		target = in.Target
	}
	l := usage.Labels{Alias: in.Model, Target: target}
	if k := callerKey(c); k != nil {
		l.Key = k.ID
	}
	_ = s.o.Usage.Store.Add(ctx, m.start.UTC().Format(usage.DayLayout), l, n) // a Redis failure is counted and logged there
}

// roundMeter is the request's meter as turn sees it.
type roundMeter struct {
	s *Server
	c echo.Context
}

func (rm roundMeter) Round(st *fallback.Stream, resp *llm.Response, err error) {
	rm.s.meterRound(rm.c, st, resp, err)
}

// meterRound accounts for one round, or one attempt that failed after it committed: what
// the provider reported, else an estimate (a stream that ended without usage, or failed),
// marked as such. Every serve path calls it once per relay.Run.
func (s *Server) meterRound(c echo.Context, st *fallback.Stream, resp *llm.Response, err error) {
	m := meterOf(c)
	if m == nil || resp == nil {
		return
	}
	// A round that ended well has usage, reported or estimated by the relay; a failed one has
	// it only if the report came before the failure.
	reported := err == nil || resp.Usage != (llm.Usage{})
	s.charge(m, st.Target, st.Model, usage.Of(resp, reported, m.prompt))
}

// charge adds u, used on target serving model, to the request's account.
func (s *Server) charge(m *meter, target, model string, u llm.Usage) {
	p, _ := s.o.Usage.Prices.Lookup(target, model)
	m.cost += usage.Cost(p, u)
	m.usage.PromptTokens += u.PromptTokens
	m.usage.CompletionTokens += u.CompletionTokens
	m.usage.TotalTokens += u.TotalTokens
	m.usage.CachedTokens += u.CachedTokens
	m.usage.CacheWriteTokens += u.CacheWriteTokens
	m.usage.ReasoningTokens += u.ReasoningTokens
	m.usage.Estimated = m.usage.Estimated || u.Estimated
	m.target, m.charged = target, true
}

// costHeader sets X-Sluice-Cost-Usd, the request's cost so far, on h: the headers of an
// answer that is complete before they leave (a non-streamed one, or a held stream).
func costHeader(c echo.Context, h http.Header) {
	if m := meterOf(c); m != nil && m.charged {
		h.Set("X-Sluice-Cost-Usd", strconv.FormatFloat(usage.USD(m.cost), 'f', -1, 64))
	}
}

// chargeEmbeddings accounts for an embeddings call, whose usage the answer reports, and sets
// its cost header.
func (s *Server) chargeEmbeddings(c echo.Context, st *fallback.Stream, u llm.Usage) {
	if m := meterOf(c); m != nil {
		s.charge(m, st.Target, st.Model, u)
		costHeader(c, c.Response().Header())
	}
}
