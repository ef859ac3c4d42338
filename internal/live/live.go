// Package live serves Realtime sessions (GET /v1/realtime over a WebSocket, issue 48): it
// resolves the session's model to its chain, admits the session once at connect (the key's
// models, rate limits and budget: a refusal is a plain HTTP answer in OpenAI's shape, before
// the upgrade), dials the first target of the chain that serves Realtime, falling back
// before the upstream's WebSocket is established, then hands both ends to the wire
// (dialect/realtime.Serve). Each response.done is charged to the key's account as it
// arrives and checked against its budgets: one that is spent ends the session (an error
// event, then a close). The session is one record of the request log: its attempts are the
// upstream's connect, its turns each response's usage. Close drains the sessions at
// shutdown: each gets a close 1001 (going away) once its response under way is done.
package live

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/dialect/realtime"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Service serves the Realtime sessions of the gateway's chains. Its fields are read-only
// once it serves; safe for concurrent use.
type Service struct {
	// Catalog finds the chain of a session's model (an alias or "provider/model").
	Catalog *fallback.Catalog
	// Session is every session's rules: the redaction windows, the read limit, the ping,
	// the drain's timeout. Its Turn and Drain are the service's own.
	Session realtime.Options

	mu       sync.Mutex
	drain    context.Context            // done at Close
	drained  context.CancelFunc         // ends drain
	draining bool                       // Close was called: no new session
	sessions map[*telemetry.Access]bool // the sessions whose record is not written yet
	opened   atomic.Int64               // len(sessions), read without mu by Recorded
	idle     chan struct{}              // closed once sessions empties after Close
}

// closeWait is how long Close waits for the sessions' records past the drain's timeout:
// each close handshake, and the record's writing.
const closeWait = 10 * time.Second

// begin counts the session of rec open until Recorded, and answers the drain every
// session watches; false: the service is closed.
func (s *Service) begin(rec *telemetry.Access) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return nil, false
	}
	if s.sessions == nil {
		s.sessions = map[*telemetry.Access]bool{}
		s.drain, s.drained = context.WithCancel(context.Background())
	}
	s.sessions[rec] = true
	s.opened.Add(1)
	return s.drain, true
}

// Recorded takes each record of the request log as it is written (telemetry's Record): a
// session's record ends its count in Close's wait. Any other is ignored, without a lock
// while no session is open (it is called for every request).
func (s *Service) Recorded(in *telemetry.Access) {
	if s.opened.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sessions[in] {
		return
	}
	delete(s.sessions, in)
	s.opened.Add(-1)
	if len(s.sessions) == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// Close drains the sessions (the gateway's shutdown): a new one is refused with 503, and
// each open one ends with a close 1001 (going away) once its response under way is done,
// or Session.DrainTimeout has passed, its usage charged. It waits for their records to be
// written (Recorded), at most DrainTimeout and closeWait, so that the request log closes
// after them.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		return nil
	}
	s.draining = true
	if s.drained != nil {
		s.drained()
	}
	if len(s.sessions) == 0 {
		s.mu.Unlock()
		return nil
	}
	idle := make(chan struct{})
	s.idle = idle
	s.mu.Unlock()
	t := time.NewTimer(s.Session.DrainTimeout + closeWait)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
	return nil
}

// Serve answers r, a request of GET /v1/realtime by key (nil: auth off), whose access
// record is rec, admitted by p: a ticket per session, settled when it ends with what its
// turns cost. An error before the upgrade is answered by reject, in OpenAI's shape; after
// it, errors go to the client as error events. The path's parameters and the route are
// unused (the signature is the server's for the routes whose package admits them).
func (s *Service) Serve(w http.ResponseWriter, r *http.Request, _ func(string) string, _ string, key *auth.Key,
	rec *telemetry.Access, p *admit.Policy, reject func(error) error) error {
	ctx := r.Context()
	drain, ok := s.begin(rec)
	if !ok {
		return reject(&llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Type: "server_error", Code: "shutting_down",
			Message: "The gateway is shutting down; open the session again."})
	}
	t := p.Ticket(key, time.Now())
	status := http.StatusSwitchingProtocols
	defer func() { t.Settle(context.WithoutCancel(ctx), rec, status) }()
	fail := func(err error) error {
		status = llm.HTTPStatus(err)
		return reject(err)
	}
	d, err := realtime.Decode(nil, dialect.Input{Op: dialect.Realtime, Header: r.Header.Get, Query: r.URL.Query().Get})
	if err != nil {
		return fail(err)
	}
	rec.Model, rec.Request, rec.Stream = d.Model, d.Req, true
	chain, err := s.Catalog.Resolve(d.Model)
	if err != nil {
		return fail(err)
	}
	rec.Alias = chain.Alias
	err = t.Admit(ctx, admit.Ask{Model: d.Model, Req: d.Req, Chain: chain})
	if key != nil {
		oai.RateHeaders(w.Header(), t.Limits) // on refusals and sessions alike
	}
	if err != nil {
		return fail(err)
	}
	sess, err := s.open(ctx, chain, d.Req, realtime.Beta(r))
	rec.Tries, rec.Attempts = sess.run.Attempts, len(sess.run.Attempts)
	if err != nil {
		return fail(err)
	}
	rec.Target = sess.st.Target
	rounds := t.Rounds() // each turn's budget check (nil: the key has no limits and no budget)
	o := s.Session
	o.Drain = drain
	o.Turn = func(ctx context.Context, turn realtime.Turn) error {
		t.Charge(sess.st.Target, sess.st.Model, turn.Usage)
		sess.turns = append(sess.turns, telemetry.Turn{Start: cmpTime(turn.Start, turn.End), End: turn.End, Usage: turn.Usage})
		if rounds == nil {
			return nil
		}
		return rounds.Spend(ctx, t.Cost) // the budgets only: the connect took the session's request
	}
	out := realtime.Serve(ctx, w, r, sess.conn, o)
	t.Held = append(t.Held, rounds.Reservations()...) // settled with the session's cost
	sess.end(out.Err)
	resp := &llm.Response{Target: sess.st.Target, Usage: out.Usage, Attempts: sess.run.Attempts,
		FirstEvent: sess.st.FirstEvent(), Redactions: out.Masks}
	rec.Round(resp) // a session without turns used no tokens: its reservation is given back
	rec.Turns = sess.turns
	if out.Err != nil {
		rec.Kind, rec.Error = llm.KindOf(out.Err), telemetry.ErrorText(out.Err)
	}
	return nil
}

// cmpTime is t, or else when t is zero.
func cmpTime(t, otherwise time.Time) time.Time {
	if t.IsZero() {
		return otherwise
	}
	return t
}

// session is one session's upstream: the chain's walk that dialed it, the committed attempt
// (whose verdict goes to the target's health when the session ends), the connection, and
// the turns so far.
type session struct {
	run   *fallback.Run
	st    *fallback.Stream
	conn  llm.RealtimeConn
	turns []telemetry.Turn
}

// open dials the session's upstream: the chain's targets that serve Realtime, walked by the
// chain's own rules (weights, cooldowns, retries, fallback before the upstream accepted the
// session). A chain with none answers 400.
func (s *Service) open(ctx context.Context, chain *fallback.Chain, req *llm.Request, beta string) (*session, error) {
	sess := &session{}
	rt := chain.Filter(func(t *fallback.Target) bool {
		_, ok := t.Provider.(llm.Realtimer)
		return ok
	})
	if rt == nil {
		sess.run = chain.Start(req)
		return sess, &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Param: "model", Code: "model_not_supported",
			Type: "invalid_request_error", Message: "The model '" + chain.Alias + "' has no target that serves Realtime sessions (OpenAI or Azure OpenAI)."}
	}
	// Each target's provider, for this walk, is its dial: the attempt commits once the
	// upstream accepted the session (the chain's commit point).
	cp := *rt
	cp.Elements = make([]fallback.Element, len(rt.Elements))
	for i, el := range rt.Elements {
		cp.Elements[i] = el
		cp.Elements[i].Targets = make([]fallback.Target, len(el.Targets))
		for j, tg := range el.Targets {
			tg.Provider = dialer{rt: tg.Provider.(llm.Realtimer), beta: beta, conn: &sess.conn}
			cp.Elements[i].Targets[j] = tg
		}
	}
	sess.run = cp.Start(req)
	st, err := sess.run.Next(ctx)
	if err != nil {
		return sess, err
	}
	sess.st = st
	return sess, nil
}

// end gives the attempt its verdict: the session's end, or the upstream's failure err (a
// client that left, or a turn refused, is no fault of the target's).
func (sess *session) end(err error) {
	if k := llm.KindOf(err); err != nil && k != llm.Canceled && k != llm.Invalid && k != llm.RateLimited && k != llm.Refused {
		sess.run.Fail(sess.st, err)
	} else {
		_, _ = sess.st.Recv() // the dial's stream ends: a success
	}
	_ = sess.st.Close()
}

// dialer is a Realtime target as the chain calls it: its Stream dials the session and
// answers one event, the commit; the connection goes to conn, for the session.
type dialer struct {
	rt   llm.Realtimer
	beta string
	conn *llm.RealtimeConn
}

func (d dialer) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	c, err := d.rt.Realtime(ctx, llm.RealtimeCall{Model: req.Model, Beta: d.beta})
	if err != nil {
		return nil, err
	}
	*d.conn = c
	return &accepted{}, nil
}

// accepted is the stream of a dialed session: one event (the commit), then its end. It owns
// nothing: the session closes the connection.
type accepted struct{ sent bool }

func (a *accepted) Recv() (llm.Event, error) {
	if a.sent {
		return llm.Event{}, io.EOF
	}
	a.sent = true
	return llm.Event{Type: llm.EvData}, nil
}

func (a *accepted) Close() error { return nil }
