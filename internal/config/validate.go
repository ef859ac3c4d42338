package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	pathpkg "path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/auth"
)

// validator checks a decoded config; every error carries the line of the path it is about.
type validator struct {
	file  string
	lines map[string]int
	errs  []*Error
}

func (v *validator) errorf(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.file, Line: v.line(path), Msg: path + ": " + fmt.Sprintf(format, args...)})
}

// line finds the line of path, or of its nearest ancestor written in the file.
func (v *validator) line(path string) int {
	for path != "" {
		if l, ok := v.lines[path]; ok {
			return l
		}
		path = path[:max(strings.LastIndexAny(path, ".["), 0)]
	}
	return 0
}

func oneOf(s string, allowed ...string) bool { return slices.Contains(allowed, s) }

var (
	toolName  = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func (v *validator) metadata(path string, m map[string]string) {
	if len(m) > auth.MaxMetadataPairs {
		v.errorf(path, "at most %d pairs", auth.MaxMetadataPairs)
	}
	for _, k := range sortedKeys(m) {
		if k == "" || len(k) > auth.MaxMetadataKey || len(m[k]) > auth.MaxMetadataValue {
			v.errorf(path, "keys of 1 to %d bytes, values of at most %d", auth.MaxMetadataKey, auth.MaxMetadataValue)
			return
		}
	}
}

func (v *validator) config(c *Config) {
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		v.errorf("listen", "want host:port (127.0.0.1:8080, :8080)")
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		v.errorf("listen", "invalid port %q", port)
	}
	for i, s := range c.Auth.TrustedProxies {
		if _, err := parseProxy(s); err != nil {
			v.errorf(fmt.Sprintf("auth.trusted_proxies[%d]", i), "want an address or a CIDR (10.0.0.0/8, ::1), got %q", s)
		}
	}
	v.positive("heartbeat_interval", int64(c.HeartbeatInterval))
	v.positive("limits.max_body_bytes", c.Limits.MaxBodyBytes)
	v.positive("limits.max_upload_bytes", c.Limits.MaxUploadBytes)
	v.positive("limits.body_timeout", int64(c.Limits.BodyTimeout))
	if !oneOf(c.Redis.OnFailure, "open", "closed") {
		v.errorf("redis.on_failure", "want open or closed, got %q", c.Redis.OnFailure)
	}
	v.positive("redis.timeout", int64(c.Redis.Timeout))
	v.positive("redis.spool", int64(c.Redis.Spool))
	v.redis(c.Redis)
	for _, name := range sortedKeys(c.Providers) {
		v.provider("providers."+name, name, c.Providers[name])
	}
	for _, name := range sortedKeys(c.Models) {
		v.alias(c, "models."+name, name, c.Models[name])
	}
	for _, sec := range c.Plain() {
		for _, name := range sortedKeys(sec.Aliases) {
			path, a := sec.Name+"."+name, sec.Aliases[name]
			if _, ok := c.Models[name]; ok {
				v.errorf(path, "name also used by a model alias")
			}
			v.chain(c, path, name, a.Targets, sec.Name == "embeddings", true)
			if sec.Name == "embeddings" {
				v.embeddingModels(c, path, a.Targets)
			} else {
				v.served(c, sec, path, a.Targets)
			}
			v.nonNegative(path+".retries", int64(a.Retries))
		}
	}
	v.redaction(c.Redaction)
	for _, name := range sortedKeys(c.Guardrails) {
		v.guardrail("guardrails."+name, c.Guardrails[name])
	}
	v.keys(c)
	v.logs(c)
	v.console(c.Console)
	v.prices(c.Prices)
	for _, name := range sortedKeys(c.Tools) {
		v.tool("tools."+name, name, c.Tools[name])
	}
	v.positive("runs.max_rounds", int64(c.Runs.MaxRounds))
	v.positive("runs.flush_interval", int64(c.Runs.FlushInterval))
	v.positive("runs.ttl", int64(c.Runs.TTL))
	v.telemetry(c.Telemetry)
	v.cacheStore(c.Cache)
	v.responsesStore(c.Responses)
	v.realtime(c.Realtime)
}

func (v *validator) positive(path string, n int64) {
	if n <= 0 {
		v.errorf(path, "must be positive")
	}
}

func (v *validator) nonNegative(path string, n int64) {
	if n < 0 {
		v.errorf(path, "must not be negative")
	}
}

// httpURL checks an absolute http(s) URL without quoting it (it may carry a token).
func (v *validator) httpURL(path, s string) {
	if u, err := url.Parse(s); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
		v.errorf(path, "want an absolute http:// or https:// URL")
	}
}

func (v *validator) provider(path, name string, p Provider) {
	if strings.Contains(name, "/") {
		v.errorf(path, "a provider name cannot contain /")
	}
	k, ok := kindOf(p.Kind)
	switch {
	case p.Kind == "":
		v.errorf(path, "missing kind (%s)", kindList())
		return
	case !ok:
		v.errorf(path+".kind", "unknown provider kind %q (want %s)", p.Kind, kindList())
		return
	case k.APIs == nil && p.API != "":
		v.errorf(path+".api", noAPI)
	case k.APIs != nil && !oneOf(p.API, k.APIs...):
		v.errorf(path+".api", "want %s, got %q", k.APIWant, p.API)
	}
	// The keys of the other kinds, in the table's order.
	for _, other := range kinds {
		for _, key := range other.Fields {
			if other.Name != p.Kind && isSet(p, key) {
				v.errorf(path+"."+key, "applies to kind %s only", other.Name)
			}
		}
	}
	badURL := false
	if k.Check != nil {
		k.Check(p, func(key, msg string) {
			badURL = badURL || key == "base_url"
			if key != "" {
				key = "." + key
			}
			v.errorf(path+key, "%s", msg)
		})
	}
	if p.BaseURL != "" && !badURL {
		v.httpURL(path+".base_url", p.BaseURL)
	}
}

func (v *validator) alias(c *Config, path, name string, a Alias) {
	if strings.ContainsAny(name, "*?[") {
		// A pattern alias routes every model id it matches (Claude Code's concrete ids).
		if _, err := pathpkg.Match(name, ""); err != nil {
			v.errorf(path, "a pattern alias name must be a valid pattern (path.Match: *, ?, [...])")
		}
	}
	v.chain(c, path, name, a.Targets, false, false)
	v.chatServed(c, path, a.Targets)
	v.nonNegative(path+".retries", int64(a.Retries))
	if !oneOf(a.OnMidstreamFailure, "fail", "restart") {
		v.errorf(path+".on_midstream_failure", "want fail or restart, got %q", a.OnMidstreamFailure)
	}
	if !oneOf(a.Upstream, "stream", "plain") {
		v.errorf(path+".upstream", "want stream or plain, got %q", a.Upstream)
	}
	if !oneOf(a.Batch, "", "emulate") || a.BatchRate < 0 {
		v.errorf(path+".batch", "want emulate (with batch_rate >= 0), got %q (batch_rate %d)", a.Batch, a.BatchRate)
	}
	if !oneOf(a.HostedTools, "drop", "refuse") {
		v.errorf(path+".hosted_tools", "want drop or refuse, got %q", a.HostedTools)
	}
	if !oneOf(a.PromptCache, "auto", "off") {
		v.errorf(path+".prompt_cache", "want auto or off, got %q", a.PromptCache)
	}
	if !oneOf(a.Affinity, "conversation", "off") {
		v.errorf(path+".affinity", "want conversation or off, got %q", a.Affinity)
	}
	v.positive(path+".coalesce.events", int64(a.Coalesce.Events))
	v.cache(path+".cache", a.Cache)
	v.shadow(c, path+".shadow", a.Shadow)
	v.positive(path+".ttl", int64(a.TTL))
	for i, g := range a.Guardrails {
		if _, ok := c.Guardrails[g]; !ok {
			v.errorf(fmt.Sprintf("%s.guardrails[%d]", path, i), "unknown guardrail %q", g)
		}
	}
	for i, t := range a.Tools {
		if _, ok := c.Tools[t]; !ok {
			v.errorf(fmt.Sprintf("%s.tools[%d]", path, i), "unknown tool %q", t)
		}
	}
}

// shadow checks an alias's traffic mirror: a target of a configured provider, a share
// between 0 (exclusive) and 100.
func (v *validator) shadow(c *Config, path string, s *Shadow) {
	if s == nil {
		return
	}
	if prov, _, ok := SplitTarget(s.Target); !ok {
		v.errorf(path+".target", "want provider/model, got %q", s.Target)
	} else if _, ok := c.Providers[prov]; !ok {
		v.errorf(path+".target", "target %q: unknown provider %q", s.Target, prov)
	}
	if !(s.Percent > 0 && s.Percent <= 100) { // NaN fails too
		v.errorf(path+".percent", "want a share of the requests above 0 and at most 100, got %v", s.Percent)
	}
}

// chain checks the elements of an alias: every target is provider/model of a configured
// provider.
func (v *validator) chain(c *Config, path, name string, es []Element, embeddings, plain bool) {
	if name == "" || strings.Contains(name, "/") {
		v.errorf(path, "an alias name cannot be empty or contain / (provider/model names one target)")
	}
	if len(es) == 0 {
		v.errorf(path, "no targets")
	}
	for i, e := range es {
		p := fmt.Sprintf("%s.targets[%d]", path, i)
		if e.EmbeddingModel != "" && !embeddings {
			v.errorf(p, "embedding_model applies to embeddings only")
		}
		v.nonNegative(p+".retries", int64(e.Retries))
		switch {
		case embeddings && e.upstream != "":
			v.errorf(p+".upstream", "upstream applies to chat aliases only")
		case !oneOf(e.upstream, "", "stream", "plain"):
			v.errorf(p+".upstream", "want stream or plain, got %q", e.upstream)
		}
		if plain && (e.Route != "" || e.MaxTTFT != 0) { // routing learns from chat aliases only
			v.errorf(p+".route", "route and max_ttft apply to chat aliases only")
		}
		for _, t := range e.Targets {
			prov, _, ok := SplitTarget(t)
			if !ok {
				v.errorf(p, "target %q is not provider/model", t)
			} else if _, ok := c.Providers[prov]; !ok {
				v.errorf(p, "target %q: unknown provider %q", t, prov)
			}
		}
	}
}

func (v *validator) redaction(r Redaction) {
	v.positive("redaction.window_bytes", int64(r.WindowBytes))
	v.positive("redaction.max_match_bytes", int64(r.MaxMatchBytes))
	v.positive("redaction.max_run_bytes", int64(r.MaxRunBytes))
	names := map[string]bool{}
	for i, p := range r.Patterns {
		path := fmt.Sprintf("redaction.patterns[%d]", i)
		if p.Name == "" || names[p.Name] {
			v.errorf(path+".name", "want a unique, non-empty name (it appears in [REDACTED:name])")
		}
		names[p.Name] = true
		v.regex(path+".regex", p.Regex)
	}
	for i, t := range r.Terms {
		if t == "" {
			v.errorf(fmt.Sprintf("redaction.terms[%d]", i), "empty term")
		}
	}
}

func (v *validator) regex(path, re string) {
	if re == "" {
		v.errorf(path, "missing regex")
	} else if _, err := regexp.Compile(re); err != nil {
		v.errorf(path, "%v", err)
	}
}

func (v *validator) guardrail(path string, g Guardrail) {
	if !oneOf(g.Stage, "input", "output") {
		v.errorf(path+".stage", "want input or output, got %q", g.Stage)
	}
	if !oneOf(g.Mode, "hold", "stream") {
		v.errorf(path+".mode", "want hold or stream, got %q", g.Mode)
	}
	switch {
	case !oneOf(g.Action, "block", "mask", "retry"):
		v.errorf(path+".action", "want block, mask or retry, got %q", g.Action)
	case g.Action == "retry" && g.Stage != "output":
		v.errorf(path+".action", "retry applies to output guardrails only")
	case g.Action == "mask" && (g.Stage != "input" || !oneOf(g.Kind, "terms", "regex", "pii")):
		v.errorf(path+".action", "mask applies to input guardrails of kind terms, regex or pii")
	}
	switch g.Kind {
	case "terms":
		if len(g.Terms) == 0 {
			v.errorf(path, "kind terms needs terms")
		}
	case "regex":
		v.regex(path+".pattern", g.Pattern)
	case "json_schema":
		// Without a schema, the request's response_format says what the answer must be.
		if g.Stage != "output" {
			v.errorf(path+".kind", "json_schema applies to output guardrails only")
		}
	case "max_size":
		if g.MaxBytes <= 0 && g.MaxTokens <= 0 {
			v.errorf(path, "kind max_size needs a positive max_bytes or max_tokens")
		}
		v.nonNegative(path+".max_bytes", g.MaxBytes)
		v.nonNegative(path+".max_tokens", g.MaxTokens)
	case "pii":
	default:
		v.errorf(path+".kind", "want terms, regex, json_schema, max_size or pii, got %q", g.Kind)
	}
}

func (v *validator) keys(c *Config) {
	teams := v.teams(c)
	names, hashes := map[string]bool{}, map[string]bool{}
	for i, k := range c.Keys {
		path := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" || names[k.Name] {
			v.errorf(path+".name", "want a unique, non-empty name")
		}
		switch {
		case k.Hash == "" || hashes[k.Hash]:
			v.errorf(path+".hash", "want a unique, non-empty hash")
		case !sha256Hex.MatchString(k.Hash):
			// Never quote it: it may be the key itself, pasted by mistake.
			v.errorf(path+".hash", "want the hex SHA-256 of the key (printf %%s \"$KEY\" | sha256sum), never the key itself")
		}
		names[k.Name], hashes[k.Hash] = true, true
		v.models(c, path, k.Models)
		v.metadata(path+".metadata", k.Metadata)
		v.nonNegative(path+".limits.rpm", k.Limits.RPM)
		v.nonNegative(path+".limits.tpm", k.Limits.TPM)
		v.nonNegative(path+".limits.tool_calls_per_minute", k.Limits.ToolCallsPerMinute)
		v.mcpAccess(c, path, k.MCP)
		if k.Budget.DailyUSD < 0 || k.Budget.MonthlyUSD < 0 {
			v.errorf(path+".budget", "must not be negative")
		}
		if k.Team != "" && !teams[k.Team] {
			v.errorf(path+".team", "unknown team %q (a name in teams:)", k.Team)
		}
		for j, g := range k.Guardrails {
			if _, ok := c.Guardrails[g]; !ok {
				v.errorf(fmt.Sprintf("%s.guardrails[%d]", path, j), "unknown guardrail %q", g)
			}
		}
	}
}

// models checks a key's or team's models: aliases, embedding models, provider/model, "*".
func (v *validator) models(c *Config, path string, models []string) {
	for j, m := range models {
		p := fmt.Sprintf("%s.models[%d]", path, j)
		_, isAlias := c.Models[m]
		isEmbedding := false // or another plain endpoint's alias
		for _, sec := range c.Plain() {
			_, in := sec.Aliases[m]
			isEmbedding = isEmbedding || in
		}
		switch prov, _, ok := SplitTarget(m); {
		case m == "*" || isAlias || isEmbedding:
		case ok:
			if _, known := c.Providers[prov]; !known {
				v.errorf(p, "unknown provider %q", prov)
			}
		default:
			v.errorf(p, "unknown model alias %q", m)
		}
	}
}

// mcpAccess checks a key's or team's access to the MCP gateway.
func (v *validator) mcpAccess(c *Config, path string, m *KeyMCP) {
	if m == nil {
		return
	}
	for j, name := range m.Servers {
		if t, ok := c.Tools[name]; name != "*" && (!ok || t.MCP == nil) {
			v.errorf(fmt.Sprintf("%s.mcp.servers[%d]", path, j), "unknown MCP server %q (a name in tools: with mcp)", name)
		}
	}
	for j, p := range m.Tools {
		if _, err := pathpkg.Match(p, ""); err != nil || p == "" {
			v.errorf(fmt.Sprintf("%s.mcp.tools[%d]", path, j), "%q is not a server__tool name or pattern (path.Match)", p)
		}
	}
}

// logs checks the request log: its store's URL (never quoted: it may hold a password), and
// every capture setting.
func (v *validator) logs(c *Config) {
	l := c.Logs
	if l.URL != "" {
		if u, err := url.Parse(l.URL); err != nil || !oneOf(u.Scheme, "sqlite", "postgres", "postgresql") ||
			(u.Scheme == "sqlite" && u.Host+u.Path == "") {
			v.errorf("logs.url", "want sqlite://path/to/logs.db, a postgres:// URL, or \"\" (no request log)")
		}
	}
	v.positive("logs.retention", int64(l.Retention))
	v.positive("logs.rollup_retention", int64(l.RollupRetention))
	v.positive("logs.content_retention", int64(l.ContentRetention))
	v.positive("logs.queue", int64(l.Queue))
	v.positive("logs.max_content_bytes", int64(l.MaxContentBytes))
	if !oneOf(l.Capture, "metadata", "content") {
		v.errorf("logs.capture", "want metadata or content, got %q", l.Capture)
	}
	for _, name := range sortedKeys(c.Models) {
		if cp := c.Models[name].Capture; !oneOf(cp, "", "metadata", "content") {
			v.errorf("models."+name+".capture", "want metadata or content, got %q", cp)
		}
	}
	for i, k := range c.Keys {
		if !oneOf(k.Capture, "", "metadata", "content") {
			v.errorf(fmt.Sprintf("keys[%d].capture", i), "want metadata or content, got %q", k.Capture)
		}
	}
}

// prices checks the price table: keyed by a model name or provider/model, no negative price.
func (v *validator) prices(ps map[string]Price) {
	for _, name := range sortedKeys(ps) {
		p, path := ps[name], "prices."+name
		if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
			v.errorf(path, "want a model name or provider/model")
		}
		neg := p.Input < 0 || p.Output < 0
		for _, f := range []*float64{p.CachedInput, p.CacheWrite, p.CacheWrite1h} {
			neg = neg || (f != nil && *f < 0)
		}
		if neg {
			v.errorf(path, "prices must not be negative")
		}
	}
}

func (v *validator) tool(path, name string, t Tool) {
	if !toolName.MatchString(name) {
		v.errorf(path, "a tool name must match %s (what the model sees)", toolName)
	}
	kinds := 0
	for _, set := range []bool{t.HTTP != nil, t.MCP != nil, t.Sim != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		v.errorf(path, "set exactly one of http, mcp and sim")
	case t.HTTP != nil:
		v.httpURL(path+".http.url", t.HTTP.URL)
		v.positive(path+".http.timeout", int64(t.HTTP.Timeout))
		v.positive(path+".http.liveness", int64(t.HTTP.Liveness))
		v.schema(path+".http.parameters", t.HTTP.Parameters)
	case t.MCP != nil:
		if strings.Contains(name, "__") {
			v.errorf(path, "an MCP server name cannot contain __ (its tools are named server__tool)")
		}
		v.mcp(path+".mcp", t.MCP)
	case t.Sim != nil:
		if t.Sim.Steps < 0 || t.Sim.Steps > 10000 {
			v.errorf(path+".sim.steps", "want 0 to 10000")
		}
		v.nonNegative(path+".sim.interval", int64(t.Sim.Interval))
		v.schema(path+".sim.parameters", t.Sim.Parameters)
	}
}

func (v *validator) mcp(path string, m *MCPTool) {
	switch {
	case (m.URL == "") == (m.Command == ""):
		v.errorf(path, "set exactly one of url (Streamable HTTP) and command (a local server over stdio)")
	case m.URL != "":
		v.httpURL(path+".url", m.URL)
		if len(m.Args) > 0 || len(m.Env) > 0 || m.Cwd != "" {
			v.errorf(path, "args, env and cwd apply to a command, not a url")
		}
	default:
		if len(m.Headers) > 0 {
			v.errorf(path+".headers", "headers apply to a url; a command takes env")
		}
		for _, k := range sortedKeys(m.Env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				v.errorf(path+".env", "%q is not an environment variable name", k)
			}
		}
	}
	v.positive(path+".timeout", int64(m.Timeout))
	v.positive(path+".liveness", int64(m.Liveness))
	if f := m.Tools; f != nil {
		if f.Allow != nil && len(f.Allow) == 0 {
			v.errorf(path+".tools.allow", "an empty allow list offers no tool: list tools, or leave allow out")
		}
		for _, list := range []struct {
			key      string
			patterns []string
		}{{"allow", f.Allow}, {"deny", f.Deny}} {
			for i, p := range list.patterns {
				if _, err := pathpkg.Match(p, ""); err != nil || p == "" {
					v.errorf(fmt.Sprintf("%s.tools.%s[%d]", path, list.key, i), "%q is not a tool name or pattern (path.Match)", p)
				}
			}
		}
	}
}

// schema checks that a tool's parameters are a JSON object: the model is sent it as is.
func (v *validator) schema(path string, raw json.RawMessage) {
	var o map[string]any
	if json.Unmarshal(raw, &o) != nil || o == nil {
		v.errorf(path, "want a JSON schema object")
	}
}

// redis checks the form of the redis section: one of url, cluster and sentinel, or none.
func (v *validator) redis(r Redis) {
	var set []string
	if r.URL != "" {
		set = append(set, "url")
		// The URL may hold a password: never quote it.
		if u, err := url.Parse(r.URL); err != nil || !oneOf(u.Scheme, "redis", "rediss", "unix") {
			v.errorf("redis.url", "want a redis://, rediss:// or unix:// URL")
		}
	}
	if r.Cluster != nil {
		set = append(set, "cluster")
		v.hostPorts("redis.cluster.addrs", r.Cluster.Addrs)
	}
	if r.Sentinel != nil {
		set = append(set, "sentinel")
		if r.Sentinel.Master == "" {
			v.errorf("redis.sentinel.master", "want the name the sentinels monitor (mymaster)")
		}
		v.hostPorts("redis.sentinel.addrs", r.Sentinel.Addrs)
	}
	if len(set) > 1 {
		v.errorf("redis", "set one of url, cluster and sentinel, not %s", strings.Join(set, " and "))
	}
}

// hostPorts checks a non-empty list of host:port addresses (an address is never a secret).
func (v *validator) hostPorts(path string, addrs []string) {
	if len(addrs) == 0 {
		v.errorf(path, "want at least one host:port")
	}
	for i, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			v.errorf(fmt.Sprintf("%s[%d]", path, i), "want host:port, got %q", a)
		}
	}
}
