package config

import (
	"encoding/json"
	"net/netip"
)

// Config is the whole gateway configuration, defaults filled, references checked, unusable
// providers pruned.
type Config struct {
	Listen            string               `yaml:"listen"`
	Auth              Auth                 `yaml:"auth"`
	Redis             Redis                `yaml:"redis"`
	CORS              CORS                 `yaml:"cors"`
	Limits            Limits               `yaml:"limits"`
	HeartbeatInterval Duration             `yaml:"heartbeat_interval"`
	Providers         map[string]Provider  `yaml:"providers"`
	Models            map[string]Alias     `yaml:"models"`
	Redaction         Redaction            `yaml:"redaction"`
	Guardrails        map[string]Guardrail `yaml:"guardrails"`
	Keys              []Key                `yaml:"keys"`
	Teams             []Team               `yaml:"teams"` // teams.go
	Prices            map[string]Price     `yaml:"prices"`
	Tools             map[string]Tool      `yaml:"tools"`
	Runs              Runs                 `yaml:"runs"`
	Embeddings        map[string]Embedding `yaml:"embeddings"`
	Moderations       map[string]Embedding `yaml:"moderations"` // plain endpoints (issue 48): Plain
	Images            map[string]Embedding `yaml:"images"`
	Rerank            map[string]Embedding `yaml:"rerank"`
	Transcriptions    map[string]Embedding `yaml:"transcriptions"` // audio (issue 48): Plain
	Speech            map[string]Embedding `yaml:"speech"`
	Telemetry         Telemetry            `yaml:"telemetry"`
	Cache             CacheStore           `yaml:"cache"`     // the response cache's store (cache.go)
	Responses         ResponsesStore       `yaml:"responses"` // the stored responses' store (cache.go)
	Logs              Logs                 `yaml:"logs"`      // the request log
	Console           Console              `yaml:"console"`   // its sign-in (console.go)
	Files             Files                `yaml:"files"`     // files and batches (files.go)
	Realtime          Realtime             `yaml:"realtime"`  // Realtime sessions (realtime.go)

	// Warnings are the problems that did not stop loading (a provider left out for want of a
	// key, an alias left with no target). They never contain a secret.
	Warnings []string `yaml:"-"`
}

func (c *Config) setDefaults() {
	c.Listen = "127.0.0.1:8080"
	c.Redis.OnFailure = "open"
	c.Redis.Timeout = millis(250)
	c.Redis.Spool = 10_000
	c.Limits.MaxBodyBytes = 10 << 20
	c.Limits.MaxUploadBytes = 25 << 20
	c.Realtime.setDefaults()
	c.Limits.BodyTimeout = seconds(30)
	c.HeartbeatInterval = seconds(10)
	c.Redaction.WindowBytes = 128
	c.Redaction.MaxMatchBytes = 4096
	c.Redaction.MaxRunBytes = 4096
	c.Runs = Runs{MaxRounds: 128, FlushInterval: millis(50), TTL: seconds(24 * 3600)}
	c.Telemetry.Prometheus = true
	c.Cache = CacheStore{MemoryBytes: 64 << 20, Lease: seconds(3)}
	c.Responses = ResponsesStore{MemoryBytes: 64 << 20}
	c.Logs = Logs{Retention: seconds(30 * 24 * 3600), RollupRetention: seconds(400 * 24 * 3600), ContentRetention: seconds(7 * 24 * 3600),
		Capture: "metadata", Queue: 10_000, MaxContentBytes: 32 << 10}
}

// Logs is the request log (DESIGN §7): one record per request of the route table, written
// off the request path.
type Logs struct {
	// URL is sqlite://path (one file, the embedded default's ./data/logs.db) or
	// postgres://... (a fleet's); "": no request log.
	URL string `yaml:"url"`
	// Retention is how long records stay (default 30d): PostgreSQL drops whole days.
	Retention Duration `yaml:"retention"`
	// RollupRetention is how long the hourly usage rollups stay (default 400d), longer than
	// the records: /admin/usage reads them (issue 50).
	RollupRetention Duration `yaml:"rollup_retention"`
	// ContentRetention is how long captured content stays (default 7d): past it a record
	// keeps its metadata until Retention, its content emptied (issue 50).
	ContentRetention Duration `yaml:"content_retention"`
	// Capture is what a record keeps unless its alias or key says otherwise: metadata
	// (default) | content (the messages and the answer, after redaction).
	Capture string `yaml:"capture"`
	// Queue bounds the records waiting for the writer (default 10000); beyond it they are
	// dropped and counted (sluice_logs_dropped_total), never waited for.
	Queue int `yaml:"queue"`
	// MaxContentBytes caps each captured text (default 32 KiB); the cap is recorded.
	MaxContentBytes int `yaml:"max_content_bytes"`
}

// Auth: with no keys and no admin token, auth is off (see CheckListen).
type Auth struct {
	AdminToken string `yaml:"admin_token"` // the admin API is on only when set
	Disabled   bool   `yaml:"disabled"`    // allows serving without auth on a non-loopback address
	// TrustedProxies are the proxies (addresses or CIDRs: a load balancer, nginx) whose
	// X-Forwarded-For names the client that the throttle of failed tokens counts: behind
	// them, without this, every client shares the proxy's address.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// Proxies are TrustedProxies as prefixes (an address is its /32 or /128); validate has
// refused what does not parse.
func (a Auth) Proxies() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range a.TrustedProxies {
		if p, err := parseProxy(s); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

func parseProxy(s string) (netip.Prefix, error) {
	if ip, err := netip.ParseAddr(s); err == nil {
		ip = ip.Unmap()
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err
}

// Redis is the shared state of a fleet: one node (URL), a Redis Cluster or a master under
// Sentinel, at most one of the three; none means in-memory state, one replica.
type Redis struct {
	URL       string         `yaml:"url"`
	Cluster   *RedisCluster  `yaml:"cluster"`
	Sentinel  *RedisSentinel `yaml:"sentinel"`
	OnFailure string         `yaml:"on_failure"` // open (default) | closed
	// Timeout bounds every Redis call (default 250ms): a slow Redis must not hold requests.
	Timeout Duration `yaml:"timeout"`
	// Spool bounds the usage records (and budget spends) kept in memory while Redis cannot
	// take them, written once it answers again (default 10000); beyond it they are dropped
	// and counted.
	Spool int `yaml:"spool"`
}

// RedisCluster is a Redis Cluster: any of its nodes (the client learns the others).
type RedisCluster struct {
	Addrs    []string `yaml:"addrs"` // host:port
	Username string   `yaml:"username"`
	Password string   `yaml:"password"`
	TLS      bool     `yaml:"tls"`
}

// RedisSentinel is a master and its replicas, found through Sentinel.
type RedisSentinel struct {
	Master           string   `yaml:"master"` // the name the sentinels monitor
	Addrs            []string `yaml:"addrs"`  // the sentinels' host:port
	Password         string   `yaml:"password"`
	SentinelPassword string   `yaml:"sentinel_password"`
}

// Enabled reports whether a Redis is configured, in any of its forms.
func (r Redis) Enabled() bool { return r.URL != "" || r.Cluster != nil || r.Sentinel != nil }

// CORS lists the browser origins allowed to call the gateway.
type CORS struct {
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// Limits are the gateway-wide request limits.
type Limits struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// BodyTimeout is how long a client may take to send a whole request body (default 30s):
	// a slower one is cut with 408, so a trickling body cannot hold a handler for ever.
	BodyTimeout Duration `yaml:"body_timeout"`
	// MaxUploadBytes bounds a multipart upload (an audio transcription's, an image edit's;
	// default 25 MB, OpenAI's for audio): its files are spooled to a temporary file, never
	// held in memory. A larger body is refused with 413.
	MaxUploadBytes int64 `yaml:"max_upload_bytes"`
}

// Provider says how to reach one upstream.
type Provider struct {
	Kind    string            `yaml:"kind"`     // openai | openai-compatible | anthropic | bedrock | gemini | vertex | azure | sim
	API     string            `yaml:"api"`      // chat (default) | responses; openai kinds and azure only, else ""
	BaseURL string            `yaml:"base_url"` // defaulted for openai, anthropic and gemini; bedrock: an endpoint override
	APIKey  string            `yaml:"api_key"`  // required by openai, anthropic and gemini, else pruned; bedrock: a Bedrock API key (bearer)
	Headers map[string]string `yaml:"headers"`  // sent on every upstream request
	Query   map[string]string `yaml:"query"`    // added to every upstream URL (Azure api-version)
	// StreamOptions asks for stream_options.include_usage; some servers reject the field.
	StreamOptions bool `yaml:"stream_options"`
	// Stream false is for the rare server that cannot stream (DESIGN §1).
	Stream bool `yaml:"stream"`

	// Bedrock (kind bedrock). Without api_key, calls are signed (SigV4) with the AWS
	// default credential chain; a provider whose chain shows no source at start is left
	// out of every chain with a warning. Nothing is fetched at start.
	Region  string `yaml:"region"`  // required: us-east-1, ...
	Profile string `yaml:"profile"` // a profile of the shared config files; "" means AWS_PROFILE or default
	// IMDS counts the EC2 instance metadata service as a source of credentials (an instance
	// role and nothing else), which cannot be seen at start without calling it.
	IMDS bool `yaml:"imds"`
	// CachePoints puts cachePoint blocks after the system prompt and the tools.
	CachePoints bool `yaml:"cache_points"`

	// Vertex AI (kind vertex): Google's models through the Gemini wire, with OAuth tokens
	// from credentials_file or Application Default Credentials; base_url overrides the
	// endpoint (https://{location}-aiplatform.googleapis.com). A provider with no visible
	// credentials is left out of every chain with a warning; nothing is fetched at start.
	Project         string `yaml:"project"`
	Location        string `yaml:"location"`         // us-central1, europe-west4, global, ...
	CredentialsFile string `yaml:"credentials_file"` // a service-account key, or any ADC JSON file
	// Metadata counts the metadata server of a Google Cloud instance as a source of
	// credentials (an attached service account and nothing else).
	Metadata bool `yaml:"metadata"`

	// Azure OpenAI (kind azure): base_url is the resource's endpoint,
	// https://{resource}.openai.azure.com; api_key goes in the api-key header. Without
	// it, a Microsoft Entra ID token: entra_token as it is (from the environment), or an app
	// registration's client credentials. A provider with none is left out of every chain.
	Deployments  bool   `yaml:"deployments"` // deployment URLs (the model names the deployment) instead of the v1 API
	APIVersion   string `yaml:"api_version"` // of deployment URLs; default 2024-10-21
	EntraToken   string `yaml:"entra_token"`
	TenantID     string `yaml:"tenant_id"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
}

func (p *Provider) setDefaults() { p.StreamOptions, p.Stream = true, true }

// Timeouts bound one attempt (DESIGN §3).
type Timeouts struct {
	Connect    Duration `yaml:"connect"`
	FirstEvent Duration `yaml:"first_event"` // no healthy event by then: fall back
	Idle       Duration `yaml:"idle"`        // gap between events after commit
	Total      Duration `yaml:"total"`       // one attempt, start to finish
}

// DefaultTimeouts are the timeouts of an alias, an embeddings alias and a direct
// "provider/model" target that sets none.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: seconds(5), FirstEvent: seconds(120), Idle: seconds(60), Total: seconds(600)}
}

// Alias is a model alias: an ordered chain of elements and the policy of its attempts. In
// YAML it is either a mapping with these keys or, as a shorthand, just the list of targets.
type Alias struct {
	Targets            []Element `yaml:"targets"`
	Timeouts           Timeouts  `yaml:"timeouts"`
	Retries            int       `yaml:"retries"`
	CommitOnReasoning  bool      `yaml:"commit_on_reasoning"`
	OnMidstreamFailure string    `yaml:"on_midstream_failure"` // fail (default) | restart
	ThinkFilter        bool      `yaml:"think_filter"`
	Coalesce           Coalesce  `yaml:"coalesce"`
	Guardrails         []string  `yaml:"guardrails"` // names in Config.Guardrails
	Tools              []string  `yaml:"tools"`      // names in Config.Tools
	RedactInput        bool      `yaml:"redact_input"`
	Cache              *Cache    `yaml:"cache"` // nil: answers are not cached (cache.go)
	// Capture is what the request log keeps of the alias's requests: metadata | content;
	// "": logs.capture. A key's capture takes precedence.
	Capture string `yaml:"capture"`
	// HostedTools is what becomes of a request's hosted tools (Codex's web_search, ...) when
	// no target of the alias speaks the Responses API, the only wire that can run them: drop
	// (default) leaves them out, with an X-Sluice-Warning header and a log line; refuse
	// answers 400 unsupported_by_targets naming the tool. An agent that loses web search
	// still works; one that gets a 400 does not (issue 35).
	HostedTools string `yaml:"hosted_tools"`
	// Upstream is how a non-streamed client's request reaches the alias's targets: stream
	// (default: one relay path, first-event stall detection) or plain (one non-streamed
	// call where the target's wire has one, far fewer reads; first_event then bounds the
	// response headers). A target's own upstream takes precedence (DESIGN §1, issue 36).
	Upstream string `yaml:"upstream"`
	// TTL is how long the gateway keeps a response of the alias asked with store: true, for
	// a previous_response_id and GET /v1/responses/{id} (default 30d, as OpenAI keeps them).
	TTL Duration `yaml:"ttl"`
	// PromptCache: auto puts provider prompt-cache breakpoints (the system prompt, the last
	// tool, the last user turn) on a request whose client sent none, for OpenAI-shaped
	// clients going to Claude targets; off (default) sends the client's own only. A cache
	// write costs more than plain input, so it pays only for prompts that repeat (issue 46).
	PromptCache string `yaml:"prompt_cache"`
	// Affinity: conversation keeps a conversation on the member of a weighted group that
	// served it (and holds its prompt cache) for 5 minutes after its last turn; off picks
	// by weight per request. Empty in the file: conversation for an alias with a group or
	// named claude-* or gpt-* (agent aliases), off otherwise, resolved at load (issue 46).
	Affinity string `yaml:"affinity"`
	// Batch: emulate serves /v1/files and /v1/batches for the alias from the gateway itself
	// (targets without a batch API: openai-compatible, sim): each line runs through the
	// normal chain as a request of the batch's key, at most BatchRate lines a second across
	// the fleet (default 10; docs/files-batches.md, issue 48). "": no emulated batches.
	Batch     string `yaml:"batch"`
	BatchRate int    `yaml:"batch_rate"`
	// Shadow mirrors a share of the alias's served requests to another target after the
	// client's answer is complete, for the request log only (issue 49; docs/fallbacks.md,
	// "Shadow traffic"). nil: none.
	Shadow *Shadow `yaml:"shadow"`
}

// Shadow is an alias's traffic mirror: Percent of its served requests (0 to 100) also go
// to Target ("provider/model"), whose answer is logged with shadow: true and never sent.
type Shadow struct {
	Target  string  `yaml:"target"`
	Percent float64 `yaml:"percent"`
}

// AffinityOn reports whether the alias keeps conversations on their group member.
func (a *Alias) AffinityOn() bool { return a.Affinity == "conversation" }

func (a *Alias) setDefaults() {
	*a = Alias{Timeouts: DefaultTimeouts(), CommitOnReasoning: true, OnMidstreamFailure: "fail",
		Coalesce: Coalesce{Events: 1}, HostedTools: "drop", Upstream: "stream", TTL: seconds(30 * 24 * 3600), PromptCache: "off"}
}

// Coalesce throttles tiny deltas: at most every Events events or Interval (DESIGN §4).
type Coalesce struct {
	Events   int      `yaml:"events"`
	Interval Duration `yaml:"interval"`
}

// Element is one step of a chain: a single target, or a weighted group of equivalent targets
// among which one is picked per request. In YAML: `provider/model`, `{target: p/m, ...}` or
// `{group: [p/m, ...], weights: [3, 1], ...}`.
type Element struct {
	Targets []string // "provider/model"; one for a plain target, several for a group
	Weights []int    // same length as Targets, all positive; equal when not given
	// Timeouts and Retries are effective: the alias's, overridden field by field by the
	// element's own `timeouts` and `retries`, resolved at load.
	Timeouts Timeouts
	Retries  int
	// Upstream is effective too: the element's `upstream`, else the alias's (chat only).
	Upstream string
	// EmbeddingModel is the model name a target serves when its own name differs (an Azure
	// deployment); embeddings only.
	EmbeddingModel string
	// Route is how a group picks its member: weighted ("", the default), latency,
	// least_busy or cost (issue 49; chat aliases only). MaxTTFT bounds the first-token p95
	// of the members route: cost may pick (0: none).
	Route   string
	MaxTTFT Duration

	over     timeoutsOverride
	retries  *int
	upstream string
}

// IsGroup reports whether the element is a weighted group rather than a single target.
func (e Element) IsGroup() bool { return len(e.Targets) > 1 }

// Embedding is an embeddings alias: a chain of targets serving the same embedding model;
// or an alias of another plain endpoint (moderations, images, rerank): a chain of targets
// serving it.
type Embedding struct {
	Targets  []Element `yaml:"targets"`
	Timeouts Timeouts  `yaml:"timeouts"`
	Retries  int       `yaml:"retries"`
}

func (e *Embedding) setDefaults() { *e = Embedding{Timeouts: DefaultTimeouts()} }

// Redaction configures the redaction window (DESIGN §4).
type Redaction struct {
	// Detectors switches built-in detectors on or off by name; absent means the redact
	// package's default. The key `pii` is lifted out into PII.
	Detectors     map[string]bool `yaml:"detectors"`
	PII           bool            `yaml:"-"` // the PII detectors: emails, phones, cards, IBANs
	WindowBytes   int             `yaml:"window_bytes"`
	MaxMatchBytes int             `yaml:"max_match_bytes"`
	MaxRunBytes   int             `yaml:"max_run_bytes"`
	Patterns      []Pattern       `yaml:"patterns"`
	Terms         []string        `yaml:"terms"`
}

// Pattern is an operator regex; a match becomes [REDACTED:Name].
type Pattern struct {
	Name  string `yaml:"name"`
	Regex string `yaml:"regex"`
}

// Guardrail screens the input or the complete output of a round (DESIGN §6).
type Guardrail struct {
	Stage  string `yaml:"stage"`  // input | output
	Kind   string `yaml:"kind"`   // terms | regex | json_schema | max_size | pii
	Mode   string `yaml:"mode"`   // hold (default) | stream; output only
	Action string `yaml:"action"` // block (default) | mask (input terms, regex, pii) | retry (output)

	Terms     []string        `yaml:"terms"`      // kind terms
	Pattern   string          `yaml:"pattern"`    // kind regex
	Schema    json.RawMessage `yaml:"schema"`     // kind json_schema: a JSON schema object; absent: response_format's
	MaxBytes  int64           `yaml:"max_bytes"`  // kind max_size
	MaxTokens int64           `yaml:"max_tokens"` // kind max_size: the prompt's (estimated) or the answer's tokens
}

func (g *Guardrail) setDefaults() { g.Mode, g.Action = "hold", "block" }

// Key is a virtual key listed in the file (small deployments).
type Key struct {
	Name string `yaml:"name"`
	// Hash is the lower-case hex SHA-256 of the key, never the key itself.
	Hash   string     `yaml:"hash"`
	Models []string   `yaml:"models"` // aliases, provider/model, or "*"; absent: ["*"]
	Limits RateLimits `yaml:"limits"`
	Budget Budget     `yaml:"budget"`
	// ExpiresAt is when the key stops working (zero: never).
	ExpiresAt Timestamp         `yaml:"expires_at"`
	Metadata  map[string]string `yaml:"metadata"`
	// Guardrails are names in Config.Guardrails, applied to every request of the key after
	// the alias's own (and, input ones, to its MCP tool calls' arguments).
	Guardrails []string `yaml:"guardrails"`
	// MCP is what the key may use of the MCP gateway (/mcp); absent: nothing.
	MCP *KeyMCP `yaml:"mcp"`
	// Capture is what the request log keeps of the key's requests: metadata | content;
	// absent: the alias's capture, else logs.capture.
	Capture string `yaml:"capture"`
	// Team names the team in teams: the key belongs to; absent: none.
	Team string `yaml:"team"`
}

// KeyMCP names the MCP servers (names in Config.Tools, or "*") and tools (server__tool
// path.Match patterns) a key may use through /mcp, on top of each server's own filter;
// servers absent with tools set: any server whose tools match.
type KeyMCP struct {
	Servers []string `yaml:"servers"`
	Tools   []string `yaml:"tools"`
}

// RateLimits are per key and per minute; zero means unlimited.
type RateLimits struct {
	RPM int64 `yaml:"rpm"`
	TPM int64 `yaml:"tpm"`
	// ToolCallsPerMinute caps the key's MCP gateway tool calls (each also counts as a
	// request against rpm).
	ToolCallsPerMinute int64 `yaml:"tool_calls_per_minute"`
}

// Budget caps spending per key; zero means unlimited.
type Budget struct {
	DailyUSD   float64 `yaml:"daily_usd"`
	MonthlyUSD float64 `yaml:"monthly_usd"`
}

// Price is what a model costs, in USD per million tokens (prices: overrides the built-in
// table, keyed by "provider/model" or a model name).
type Price struct {
	Input       float64  `yaml:"input"`
	Output      float64  `yaml:"output"`
	CachedInput *float64 `yaml:"cached_input"` // absent: the input price
	CacheWrite  *float64 `yaml:"cache_write"`  // absent: the input price
	// CacheWrite1h prices the cache writes with the 1-hour lifetime (Anthropic: 2 times the
	// input price, issue 46); absent: the cache_write price.
	CacheWrite1h *float64 `yaml:"cache_write_1h"`
	// Unit is USD per billed unit: an image generated, a rerank's search unit (issue 48).
	Unit float64 `yaml:"unit"`
	// Batch is the fraction of the price a batch's results pay (absent: 0.5, issue 48).
	Batch float64 `yaml:"batch"`
}

// Tool is a server-side tool: exactly one of HTTP, MCP and Sim is set.
type Tool struct {
	HTTP *HTTPTool `yaml:"http"`
	MCP  *MCPTool  `yaml:"mcp"`
	Sim  *SimTool  `yaml:"sim"`
}

// HTTPTool is POSTed the arguments and answers JSON, or streams progress then a result.
type HTTPTool struct {
	URL         string            `yaml:"url"`
	Headers     map[string]string `yaml:"headers"`
	Timeout     Duration          `yaml:"timeout"`  // whole call; default 60s
	Liveness    Duration          `yaml:"liveness"` // longest silence while streaming; default 15s
	Description string            `yaml:"description"`
	Parameters  json.RawMessage   `yaml:"parameters"` // JSON schema; default {"type":"object"}
}

func (t *HTTPTool) setDefaults() {
	*t = HTTPTool{Timeout: seconds(60), Liveness: seconds(15), Parameters: json.RawMessage(`{"type":"object"}`)}
}

// MCPTool is an MCP server, over Streamable HTTP (url) or a local process the gateway runs
// over stdio (command); its tools are named server__tool. Exactly one of url and command.
type MCPTool struct {
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"` // with url only
	// Command, args, env and cwd: the local server's process. env is added to a minimal
	// inherited environment (PATH, HOME, USER, LOGNAME, SHELL, TERM): the gateway's own
	// variables, its provider keys among them, are not passed on.
	Command  string            `yaml:"command"`
	Args     []string          `yaml:"args"`
	Env      map[string]string `yaml:"env"`
	Cwd      string            `yaml:"cwd"`
	Timeout  Duration          `yaml:"timeout"`  // one tool call; default 60s
	Liveness Duration          `yaml:"liveness"` // longest silence in a call; default 15s
	// Tools filters the server's tools; absent: every tool the server lists is offered.
	Tools *ToolFilter `yaml:"tools"`
}

// ToolFilter picks the tools of an MCP server the model is offered, by their names on the
// server, as path.Match patterns (* matches any run of characters but /, ? one character,
// [a-z] a class): a tool is offered when it matches a pattern of allow (or allow is absent)
// and none of deny. Both may be set: deny wins.
type ToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

func (t *MCPTool) setDefaults() { *t = MCPTool{Timeout: seconds(60), Liveness: seconds(15)} }

// SimTool runs in process, with no network (demos, tests): each call streams Steps progress
// events Interval apart, then answers, or fails when Fail is set.
type SimTool struct {
	Steps       int             `yaml:"steps"`    // default 10
	Interval    Duration        `yaml:"interval"` // default 300ms
	Fail        bool            `yaml:"fail"`
	Description string          `yaml:"description"`
	Parameters  json.RawMessage `yaml:"parameters"` // JSON schema; default {"type":"object"}
}

func (t *SimTool) setDefaults() {
	*t = SimTool{Steps: 10, Interval: millis(300), Parameters: json.RawMessage(`{"type":"object"}`)}
}

// Runs configures frontend runs (DESIGN §8).
type Runs struct {
	MaxRounds     int      `yaml:"max_rounds"`
	FlushInterval Duration `yaml:"flush_interval"`
	TTL           Duration `yaml:"ttl"`
}

// Telemetry configures metrics and traces.
type Telemetry struct {
	Prometheus     bool   `yaml:"prometheus"`
	OTLPEndpoint   string `yaml:"otlp_endpoint"`
	CaptureContent bool   `yaml:"capture_content"` // prompts and completions in spans: off by default
	// OTLPProtocol is grpc or http/protobuf; "": OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
	OTLPProtocol string `yaml:"otlp_protocol"`
	// StatsWindow is how far back GET /admin/stats looks (0: 15 minutes).
	StatsWindow Duration `yaml:"stats_window"`
}
