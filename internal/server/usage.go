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

// meter is the account of one request as it is served (usage.Meter), and what its output
// guardrails need. The request's goroutine owns it.
type meter struct {
	usage.Meter
	req    *llm.Request
	guards guard.Set
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
		m := &meter{Meter: usage.Meter{Prices: s.o.Usage.Prices, Start: time.Now()}}
		exchangeOf(c).meter = m
		if err := next(c); err != nil {
			c.Error(err)
		}
		in := reqInfo(c)
		if !m.Charged && in.Usage != nil && in.Target != "" {
			// A handler that reports usage without metered rounds (a frontend run).
			_, model, _ := strings.Cut(in.Target, "/")
			m.Charge(in.Target, model, llm.Usage{PromptTokens: in.Usage.Prompt, CompletionTokens: in.Usage.Completion,
				TotalTokens: in.Usage.Total, Estimated: in.Usage.Estimated})
		}
		in.CostUSD = usage.USD(m.Cost) // the access line and the server span carry it
		// The client may have left: the accounting still happens.
		m.Close(context.WithoutCancel(r.Context()), s.o.Usage.Budgets, s.o.Usage.Store, outcome(c))
		return nil
	}
}

// outcome is how the request ended, for the account.
func outcome(c echo.Context) usage.Outcome {
	in := reqInfo(c)
	o := usage.Outcome{Labels: usage.Labels{Alias: in.Model, Target: in.Target}, Attempts: in.Attempts,
		Failed: in.Kind != llm.KindNone && in.Kind != llm.Canceled || // the client left: not an error of the call
			in.Kind == llm.KindNone && c.Response().Status >= 400}
	if (in.Cache == cacheHit || in.Cache == cacheCoalesced) && in.Response != nil {
		o.Hit, o.Saved = true, int64(in.Response.Usage.TotalTokens) // cache.go
	}
	if k := callerKey(c); k != nil {
		o.Key = k.ID
	}
	return o
}

// roundMeter is the request's meter as turn sees it.
type roundMeter struct{ m *meter }

func (rm roundMeter) Round(st *fallback.Stream, resp *llm.Response, err error) {
	rm.m.Round(st.Target, st.Model, resp, err)
}

// costHeader sets X-Sluice-Cost-Usd, the request's cost so far, on h: the headers of an
// answer that is complete before they leave (a non-streamed one, or a held stream).
func costHeader(c echo.Context, h http.Header) {
	if m := meterOf(c); m != nil && m.Charged {
		h.Set("X-Sluice-Cost-Usd", strconv.FormatFloat(usage.USD(m.Cost), 'f', -1, 64))
	}
}

// chargeEmbeddings accounts for an embeddings call, whose usage the answer reports, and sets
// its cost header.
func (s *Server) chargeEmbeddings(c echo.Context, st *fallback.Stream, u llm.Usage) {
	if m := meterOf(c); m != nil {
		m.Charge(st.Target, st.Model, u)
		costHeader(c, c.Response().Header())
	}
}
