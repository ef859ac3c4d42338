package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const providers = `
providers:
  openai: {kind: openai, api_key: k}
  sim: {kind: sim}
`

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"top level", "listen: ':1'\nlistn: x\n", `config.yaml:2: unknown key "listn" in the top level (did you mean "listen"?)`},
		{"alias", providers + "models:\n  default:\n    targets: [sim/echo]\n    tiemouts: {connect: 1s}\n",
			`config.yaml:8: unknown key "tiemouts" in models.default (did you mean "timeouts"?)`},
		{"element", providers + "models:\n  d:\n    - {target: sim/echo, retires: 1}\n",
			`config.yaml:7: unknown key "retires" in models.d.targets[0] (did you mean "retries"?)`},
		{"element timeouts", providers + "models:\n  d: [{target: sim/echo, timeouts: {frist: 1s}}]\n",
			`config.yaml:6: unknown key "frist" in models.d.targets[0].timeouts`},
		{"provider", "providers:\n  p:\n    kind: sim\n    apikey: x\n",
			`config.yaml:4: unknown key "apikey" in providers.p (did you mean "api_key"?)`},
		{"no suggestion", "telemetry:\n  zzzzzzzz: 1\n", `config.yaml:2: unknown key "zzzzzzzz" in telemetry`},
		{"duplicate", "listen: ':1'\nlisten: ':2'\n", `config.yaml:2: duplicate key "listen" in the top level`},
		{"pii is not a redaction key", "redaction: {pii: true}\n", `unknown key "pii" in redaction`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
}

func TestWrongTypes(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"int", providers + "models:\n  d:\n    targets: [sim/echo]\n    retries: lots\n",
			"config.yaml:8: models.d.retries: want an integer, got a string"},
		{"bool", "auth: {disabled: yes}\n", "config.yaml:1: auth.disabled: want true or false, got a string"},
		{"duration without unit", "heartbeat_interval: 5\n",
			`config.yaml:1: heartbeat_interval: invalid duration "5" (want a number with a unit`},
		{"negative duration", "runs: {ttl: -1h}\n", `config.yaml:1: runs.ttl: negative duration "-1h"`},
		{"mapping for string", "listen: {a: b}\n", "config.yaml:1: listen: want a string, got a mapping"},
		{"scalar for mapping", "auth: sk-secret\n", "config.yaml:1: auth: want a mapping, got a string"},
		{"scalar for sequence", "cors: {allowed_origins: '*'}\n", "cors.allowed_origins: want a sequence, got a string"},
		{"overflow", "runs: {max_rounds: 99999999999999999999}\n", "runs.max_rounds: want an integer"},
		{"element sequence", providers + "models:\n  d: [[sim/echo]]\n", "config.yaml:6: models.d.targets[0]: want provider/model"},
		{"raw schema", "guardrails:\n  g: {stage: output, kind: json_schema, schema: [1]}\n",
			"config.yaml:2: guardrails.g.schema: want a JSON schema object"},
		{"yaml syntax", "listen: [\n", "config.yaml:"},
		{"two documents", "listen: ':1'\n---\nlisten: ':2'\n", "config.yaml:2: a second document"},
		{"merge key", "a: &a {listen: ':1'}\n<<: *a\n", "config.yaml:1: unknown key \"a\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := ParseWith([]byte("listn: x\ntelemetry: {x: 1}\n"), "f.yaml", env())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T, want an *Error inside", err)
	}
	if e.File != "f.yaml" || e.Line != 1 {
		t.Errorf("got %s:%d, want f.yaml:1", e.File, e.Line)
	}
	if got := len(err.(interface{ Unwrap() []error }).Unwrap()); got != 2 {
		t.Errorf("got %d errors, want 2 (every problem reported)", got)
	}
}

func TestDefaults(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "redis:\nruns: {}\n"} {
		c := mustParse(t, src, env())
		want := &Config{
			Listen:            "127.0.0.1:8080",
			Redis:             Redis{OnFailure: "open", Timeout: millis(250), Spool: 10_000},
			Limits:            Limits{MaxBodyBytes: 10485760, BodyTimeout: seconds(30), MaxUploadBytes: 25 << 20},
			HeartbeatInterval: seconds(10),
			Redaction:         Redaction{WindowBytes: 128, MaxMatchBytes: 4096, MaxRunBytes: 4096},
			Runs:              Runs{MaxRounds: 128, FlushInterval: millis(50), TTL: seconds(86400)},
			Telemetry:         Telemetry{Prometheus: true},
			Cache:             CacheStore{MemoryBytes: 64 << 20, Lease: seconds(3)},
			Responses:         ResponsesStore{MemoryBytes: 64 << 20},
			Realtime:          Realtime{MaxMessage: 16 << 20, PingInterval: seconds(30), DrainTimeout: seconds(30)},
			Logs:              Logs{Retention: seconds(30 * 86400), RollupRetention: seconds(400 * 86400), ContentRetention: seconds(7 * 86400), Capture: "metadata", Queue: 10_000, MaxContentBytes: 32 << 10},
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("%q: got %+v, want %+v", src, c, want)
		}
	}

	c := mustParse(t, providers+`
models:
  d: [sim/echo]
guardrails:
  g: {stage: output, kind: pii}
tools:
  h: {http: {url: "http://127.0.0.1:9/t"}}
  m: {mcp: {url: "http://127.0.0.1:9/mcp"}}
`, env())
	a := c.Models["d"]
	if a.Timeouts != DefaultTimeouts() || a.Retries != 0 || !a.CommitOnReasoning ||
		a.OnMidstreamFailure != "fail" || a.Coalesce != (Coalesce{Events: 1}) || a.HostedTools != "drop" {
		t.Errorf("got alias %+v, want the defaults", a)
	}
	if got := a.Targets[0].Timeouts; got != DefaultTimeouts() {
		t.Errorf("got element timeouts %+v, want %+v", got, DefaultTimeouts())
	}
	if g := c.Guardrails["g"]; g.Mode != "hold" || g.Action != "block" {
		t.Errorf("got guardrail %+v, want mode hold, action block", g)
	}
	if h := c.Tools["h"].HTTP; h.Timeout != seconds(60) || h.Liveness != seconds(15) || string(h.Parameters) != `{"type":"object"}` {
		t.Errorf("got http tool %+v, want defaults", h)
	}
	if m := c.Tools["m"].MCP; m.Timeout != seconds(60) {
		t.Errorf("got mcp timeout %v, want 1m0s", m.Timeout)
	}
	if p := c.Providers["sim"]; !p.Stream || !p.StreamOptions || p.API != "" || p.BaseURL != "" {
		t.Errorf("got sim %+v, want streaming on, no api, no base_url", p)
	}
}

func TestElementForms(t *testing.T) {
	tests := []struct {
		name, elem string
		want       Element
	}{
		{"plain", "sim/echo", Element{Targets: []string{"sim/echo"}, Weights: []int{1}}},
		{"model with slash", "sim/meta-llama/llama-3", Element{Targets: []string{"sim/meta-llama/llama-3"}, Weights: []int{1}}},
		{"target", "{target: sim/echo}", Element{Targets: []string{"sim/echo"}, Weights: []int{1}}},
		{"group equal weights", "{group: [sim/a, openai/b]}", Element{Targets: []string{"sim/a", "openai/b"}, Weights: []int{1, 1}}},
		{"group weights", "{group: [sim/a, sim/b], weights: [3, 1]}", Element{Targets: []string{"sim/a", "sim/b"}, Weights: []int{3, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, providers+"models:\n  d: ["+tt.elem+"]\n", env())
			got := c.Models["d"].Targets[0]
			if !reflect.DeepEqual(got.Targets, tt.want.Targets) || !reflect.DeepEqual(got.Weights, tt.want.Weights) {
				t.Errorf("got %v %v, want %v %v", got.Targets, got.Weights, tt.want.Targets, tt.want.Weights)
			}
		})
	}
}

func TestElementOverrides(t *testing.T) {
	c := mustParse(t, providers+`
models:
  d:
    targets:
      - {target: sim/a, timeouts: {idle: 1s, total: 2s}, retries: 2}
      - {group: [sim/b], timeouts: {connect: 3s}}
    timeouts: {first_event: 9s}
    retries: 1
`, env())
	es := c.Models["d"].Targets
	want0 := Timeouts{Connect: seconds(5), FirstEvent: seconds(9), Idle: seconds(1), Total: seconds(2)}
	want1 := Timeouts{Connect: seconds(3), FirstEvent: seconds(9), Idle: seconds(60), Total: seconds(600)}
	if es[0].Timeouts != want0 || es[0].Retries != 2 {
		t.Errorf("got %+v retries %d, want %+v retries 2", es[0].Timeouts, es[0].Retries, want0)
	}
	if es[1].Timeouts != want1 || es[1].Retries != 1 {
		t.Errorf("got %+v retries %d, want %+v retries 1", es[1].Timeouts, es[1].Retries, want1)
	}
}

func TestElementErrors(t *testing.T) {
	tests := []struct {
		name, elem, want string
	}{
		{"both", "{target: sim/a, group: [sim/b]}", "models.d.targets[0]: set either target or group, not both"},
		{"neither", "{retries: 1}", "models.d.targets[0]: want a target or a non-empty group"},
		{"weights length", "{group: [sim/a, sim/b], weights: [1]}", "models.d.targets[0]: 1 weights for 2 group targets"},
		{"zero weight", "{group: [sim/a, sim/b], weights: [1, 0]}", "models.d.targets[0]: weights must be positive"},
		{"weights on target", "{target: sim/a, weights: [1]}", "models.d.targets[0]: weights apply to a group only"},
		{"empty group", "{group: []}", "models.d.targets[0]: want a target or a non-empty group"},
		{"route on target", "{target: sim/a, route: latency}", "models.d.targets[0]: route and max_ttft apply to a group only"},
		{"unknown route", "{group: [sim/a, sim/b], route: fastest}", `models.d.targets[0].route: want weighted, latency, least_busy or cost, got "fastest"`},
		{"weights with route", "{group: [sim/a, sim/b], weights: [2, 1], route: latency}", "models.d.targets[0]: weights apply to route: weighted only"},
		{"max_ttft without cost", "{group: [sim/a, sim/b], route: latency, max_ttft: 1s}", "models.d.targets[0].max_ttft: a positive duration, for route: cost only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, providers+"models:\n  d:\n    - "+tt.elem+"\n", "config.yaml:7: "+tt.want)
		})
	}
}

// A group's route and max_ttft are kept as written (issue 49).
func TestElementRoute(t *testing.T) {
	c := mustParse(t, providers+"models:\n  d:\n    - {group: [sim/a, sim/b], route: cost, max_ttft: 800ms}\n", env())
	if e := c.Models["d"].Targets[0]; e.Route != "cost" || e.MaxTTFT.Std() != 800*time.Millisecond {
		t.Errorf("got route %q, max_ttft %v; want cost, 800ms", e.Route, e.MaxTTFT)
	}
}

func TestAnchors(t *testing.T) {
	c := mustParse(t, providers+`
models:
  a: &chain [sim/echo]
  b: *chain
`, env())
	if got := c.AliasNames(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("got aliases %v, want [a b]", got)
	}
	// A billion laughs stops at the node budget instead of eating the memory.
	items := strings.Repeat("x, ", 400)
	refs := strings.Repeat("*k, ", 400)
	checkErr(t, "m: &m ["+items+"]\nk: &k {name: n, models: *m}\nkeys: ["+refs+"]\n", "too many nodes")
}

// A local MCP server: its command, arguments, environment (expanded) and directory, and the
// filter of its tools.
func TestMCPStdio(t *testing.T) {
	c := mustParse(t, providers+`
tools:
  ev:
    mcp:
      command: npx
      args: ["-y", "@modelcontextprotocol/server-everything@2026.8.31", stdio]
      env: {API_TOKEN: "${EV_TOKEN}"}
      cwd: /srv/mcp
      tools: {allow: [echo, "get-*"], deny: [get-env]}
`, env("EV_TOKEN", "t0k"))
	m := c.Tools["ev"].MCP
	if m.Command != "npx" || len(m.Args) != 3 || m.Args[2] != "stdio" || m.Env["API_TOKEN"] != "t0k" || m.Cwd != "/srv/mcp" ||
		m.Timeout != seconds(60) || m.URL != "" {
		t.Errorf("got %+v, want the command with its args, env, cwd and the default timeout", m)
	}
	if f := m.Tools; f == nil || len(f.Allow) != 2 || f.Allow[1] != "get-*" || len(f.Deny) != 1 || f.Deny[0] != "get-env" {
		t.Errorf("got filter %+v", m.Tools)
	}
}

// upstream is stream unless the alias or the element says plain; an element's wins.
func TestUpstream(t *testing.T) {
	c := mustParse(t, providers+`
models:
  short: [sim/echo]
  plain: {upstream: plain, targets: [sim/echo, {target: sim/x, upstream: stream}]}
  one: {targets: [{target: sim/echo, upstream: plain}, sim/x]}
`, env())
	for alias, want := range map[string][]string{"short": {"stream"}, "plain": {"plain", "stream"}, "one": {"plain", "stream"}} {
		for i, e := range c.Models[alias].Targets {
			if e.Upstream != want[i] {
				t.Errorf("%s.targets[%d]: got upstream %q, want %q", alias, i, e.Upstream, want[i])
			}
		}
	}
}

// hosted_tools is drop unless an alias says refuse, in either form of an alias.
func TestHostedTools(t *testing.T) {
	c := mustParse(t, providers+`
models:
  short: [sim/echo]
  long: {targets: [sim/echo]}
  strict: {targets: [sim/echo], hosted_tools: refuse}
`, env())
	for alias, want := range map[string]string{"short": "drop", "long": "drop", "strict": "refuse"} {
		if got := c.Models[alias].HostedTools; got != want {
			t.Errorf("%s: got hosted_tools %q, want %q", alias, got, want)
		}
	}
}

// affinity is conversation for an alias with a group and for claude-* and gpt-* aliases,
// off otherwise, and what the file says when it says it; prompt_cache is off unless auto.
func TestAffinityAndPromptCache(t *testing.T) {
	c := mustParse(t, providers+`
models:
  single: [sim/echo]
  chain: [sim/echo, sim/text]
  group: {targets: [sim/echo, {group: [sim/a, sim/b]}]}
  claude-sonnet: [sim/echo]
  gpt-5: {targets: [sim/echo]}
  off-group: {targets: [{group: [sim/a, sim/b]}], affinity: "off"}
  on-single: {targets: [sim/echo], affinity: conversation, prompt_cache: auto}
`, env())
	for _, tt := range []struct {
		name, alias, affinity, promptCache string
	}{
		{"a single target", "single", "off", "off"},
		{"a chain of single targets", "chain", "off", "off"},
		{"a group", "group", "conversation", "off"},
		{"a claude-* alias", "claude-sonnet", "conversation", "off"},
		{"a gpt-* alias", "gpt-5", "conversation", "off"},
		{"explicit off", "off-group", "off", "off"},
		{"explicit conversation, auto", "on-single", "conversation", "auto"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := c.Models[tt.alias]
			if a.Affinity != tt.affinity || a.PromptCache != tt.promptCache || a.AffinityOn() != (tt.affinity == "conversation") {
				t.Errorf("%s: got affinity %q, prompt_cache %q; want %q, %q", tt.alias, a.Affinity, a.PromptCache, tt.affinity, tt.promptCache)
			}
		})
	}
}
