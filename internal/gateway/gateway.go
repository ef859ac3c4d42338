// Package gateway assembles the gateway from its configuration (DESIGN §11): the provider
// clients, the shared state (Redis or memory), the chains, rules, guardrails, tools and
// telemetry, handed to server.New as options, so that the HTTP edge knows none of them by
// their concrete types.
package gateway

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/server"
)

// New builds the server a configuration describes: one provider client per provider, built
// by its kind's entry in the table (kinds.go), one chain per alias. A provider of a cloud
// kind without credentials is left out with a warning, like a provider without a key.
func New(c *config.Config, log *slog.Logger) (*server.Server, error) {
	// The gateway's own secrets are masked in every text it keeps or shows, its log lines
	// and audit entries among them, whatever redaction: says (issue 47; secrets.go).
	own := ownSecrets(c)
	ownRules, err := onlyOwn(own)
	if err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	log = masked(log, ownRules.Redact)
	o := server.Options{
		Chains:         map[string]*fallback.Chain{},
		MaxBodyBytes:   c.Limits.MaxBodyBytes,
		MaxUploadBytes: c.Limits.MaxUploadBytes,
		BodyTimeout:    c.Limits.BodyTimeout.Std(),
		Heartbeat:      c.HeartbeatInterval.Std(),
		Log:            log,
		Timeouts:       timeouts(config.DefaultTimeouts()), // of a direct "provider/model" target
	}
	// The replica's name for X-Sluice-Replica: set per process (a pod name), else the host's.
	if o.Replica = os.Getenv("SLUICE_REPLICA"); o.Replica == "" {
		o.Replica, _ = os.Hostname()
	}
	for _, w := range c.Warnings {
		log.Warn("config", "warning", w)
	}
	// One scrubber for every adapter: an upstream, or a proxy before it, may quote any
	// provider's credentials in its errors (issue 19); the adapters mask them, and what the
	// built-in detectors find, where upstream text becomes an error.
	scrubRules, err := redact.Compile(own) // the built-in detectors and the gateway's own secrets
	if err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	scrub := llm.Scrub(redact.NewScrubber(redact.NewCredentials(own.Secrets...), scrubRules).Scrub)
	if o.Providers, err = providers(c, shared{scrub: scrub, log: log}); err != nil { // kinds.go
		return nil, err
	}
	// One health store for every chain: a target's cooldown holds whichever alias calls it
	// (in Redis when configured: every replica's chains; gate.go).
	gate, health, rs, err := gateFromConfig(c, log)
	if err != nil {
		return nil, err
	}
	// Cooldowns are counted, and the telemetry: block configures spans and metrics (parts.go).
	health, o.Telemetry = cooldowns{health}, telemetryOptions(c)
	o.Gate, o.Usage = gate, usageFromConfig(c, rs)       // gate.go
	if o.Guards, err = guardsFromConfig(c); err != nil { // parts.go
		return nil, err
	}
	o.UI = uiFromConfig(c, rs, log)  // ui.go
	o.Cache = cacheFromConfig(c, rs) // parts.go
	o.State = stateFromConfig(c, rs) // state.go
	o.Health, o.Policies = health, map[string]server.Policy{}
	// One affinity store for every chain (keys name the alias): in Redis, the fleet's.
	var affinity fallback.Affinity = &fallback.AffinityMemory{}
	if rs != nil {
		affinity = rs.Affinity()
	}
	rt := newRouting()
	for _, alias := range c.AliasNames() {
		a := c.Models[alias]
		ch := buildChain(alias, a.Targets, func(t, pn string) (fallback.Provider, bool) {
			p, ok := o.Providers[pn]
			return p, ok
		})
		if ch == nil {
			log.Warn("alias left out: none of its targets is served", "alias", alias)
			continue
		}
		ch.CommitOnReasoning, ch.Health, ch.Log = a.CommitOnReasoning, health, log
		ch.AutoCache = a.PromptCache == "auto" // issue 46
		if a.AffinityOn() {
			ch.Affinity = affinity
		}
		rt.route(ch, o.Usage.Prices) // route.go (issue 49)
		o.Chains[alias] = ch
		o.Policies[alias] = server.Policy{ThinkFilter: a.ThinkFilter, RedactInput: a.RedactInput,
			Coalesce: relay.Coalesce{Events: a.Coalesce.Events, Interval: a.Coalesce.Interval.Std()}, Cache: cachePolicy(a),
			RefuseHosted: a.HostedTools == "refuse"}
		o.Models = append(o.Models, alias)
	}
	rt.start(rs, o.Chains, o.Replica)
	// Sharing ends before Redis closes; /admin/health shows what routing learned.
	o.Gate.Closer, o.Admin.Routing = closers{rt, o.Gate.Closer}, rt.state
	plainChains(c, &o, health, log) // parts.go
	for _, t := range c.Targets() {
		if pn, _, _ := config.SplitTarget(t); o.Providers[pn] != nil {
			o.Models = append(o.Models, t)
		}
	}
	rules, err := redact.Compile(withOwn(redactConfig(c.Redaction), own))
	if err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	o.NewWindow = func() relay.Window { return rules.NewWindow() }
	o.RedactJSON = rules.RedactJSON
	o.RedactText = rules.Redact
	lv := liveFromConfig(c, &o, rules) // live.go: GET /v1/realtime
	o.Realtime = lv.Serve
	o.UI.Tools = toolsFromConfig(c, rules, log) // tools.go
	o.MCP = mcpFromConfig(c, o.UI.Tools.Set, rules, rs, log)
	// A record's other texts repeat (user agent, path, key name): masked from memory.
	rl, err := logsFromConfig(c, o.Replica, rules.Redact, ownRules.Memo(4096).Redact, log) // logs.go
	if err != nil {
		return nil, err
	}
	if rl != nil {
		o.Telemetry.Record, o.Admin.Logs = rl.Record, rl.store
		o.Gate.Closer = closers{rl, o.Gate.Closer} // the log's last records first, then Redis
	}
	em, err := emulatedFromConfig(c, &o.Gate, rs, rl, log) // batch.go: batch: emulate (issue 48)
	if err != nil {
		return nil, err
	}
	if em != nil {
		em.runner.Budgets = o.Usage.Budgets // an ended batch's budget holds go
	}
	o.Objects = objectsFromConfig(c, &o, objectState(o.State, rs, rl), em.Host, log).Serve // objects.go: files and batches
	// A shadow call starts from a request's complete record, and ends before the log closes.
	if m := shadowFromConfig(c, &o, o.Telemetry.Record, log); m != nil { // shadow.go (issue 49)
		o.Telemetry.Record = tee(o.Telemetry.Record, m.Observe)
		o.Gate.Closer = closers{m, o.Gate.Closer}
	}
	o.Admin.Audit, o.Admin.Log = maskedAudit{rl.audit(), ownRules}, log // the audit log: logs.go
	o.Gate.Throttle = throttleFromConfig(c, rs, o.Admin.AuthFailed)     // gate.go, with the audit log
	o.Gate.Console = consoleFromConfig(c, &o.Gate.Users, rs, o.Admin.SignedIn, o.Gate.Throttle)
	o.Admin.Targets, o.Admin.Cooling = c.Targets(), health.(cooldowns).Cooling // the console's health page
	if rs != nil {
		o.Admin.Shared = rs.Ping
	}
	if em != nil {
		o.Gate.Closer = closers{em, o.Gate.Closer} // its lines stop before the log and Redis close
	}
	drainLive(&o, lv) // its sessions end first at Close, their records written
	srv := server.New(o)
	if em != nil {
		em.runner.Start(srv) // each line through the gateway's own handler
	}
	return srv, nil
}

// buildChain is the chain of alias: its elements with the targets provider serves (false
// leaves a target out), nil when none is left. The caller sets health, log and policy.
func buildChain(alias string, elements []config.Element, provider func(target, pn string) (fallback.Provider, bool)) *fallback.Chain {
	ch := &fallback.Chain{Alias: alias}
	for _, e := range elements {
		el := fallback.Element{MaxTTFT: e.MaxTTFT.Std()}
		el.Route, _ = fallback.ParseRoute(e.Route) // checked by config
		for i, t := range e.Targets {
			pn, model, _ := config.SplitTarget(t)
			prov, ok := provider(t, pn)
			if !ok {
				continue
			}
			el.Targets = append(el.Targets, fallback.Target{Name: t, Model: model, Provider: prov,
				Timeouts: timeouts(e.Timeouts), Retries: e.Retries, Plain: e.Upstream == "plain"})
			el.Weights = append(el.Weights, e.Weights[i])
		}
		if len(el.Targets) > 0 {
			ch.Elements = append(ch.Elements, el)
		}
	}
	if len(ch.Elements) == 0 {
		return nil
	}
	return ch
}

// closers closes each in turn (nil ones skipped), and joins their errors.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

func timeouts(t config.Timeouts) fallback.Timeouts {
	return fallback.Timeouts{Connect: t.Connect.Std(), FirstEvent: t.FirstEvent.Std(), Idle: t.Idle.Std(), Total: t.Total.Std()}
}

func redactConfig(r config.Redaction) redact.Config {
	rc := redact.Config{Detectors: r.Detectors, PII: r.PII, WindowBytes: r.WindowBytes,
		MaxMatchBytes: r.MaxMatchBytes, MaxRunBytes: r.MaxRunBytes, Terms: r.Terms}
	for _, p := range r.Patterns {
		rc.Patterns = append(rc.Patterns, redact.Pattern{Name: p.Name, Regex: p.Regex})
	}
	return rc
}
