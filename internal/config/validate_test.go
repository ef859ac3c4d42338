package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidation(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown provider", providers + "models:\n  d:\n    - nope/x\n", `config.yaml:7: models.d.targets[0]: target "nope/x": unknown provider "nope"`},
		{"not provider/model", providers + "models:\n  d: [sim]\n", `config.yaml:6: models.d.targets[0]: target "sim" is not provider/model`},
		{"empty model", providers + "models:\n  d: [sim/]\n", `target "sim/" is not provider/model`},
		{"group target", providers + "models:\n  d: [{group: [sim/a, x/b]}]\n", `unknown provider "x"`},
		{"alias with slash", providers + "models:\n  a/b: [sim/echo]\n", "config.yaml:6: models.a/b: an alias name cannot"},
		{"bad pattern alias", providers + "models:\n  'claude-[': [sim/echo]\n", "config.yaml:6: models.claude-[: a pattern alias name must be a valid pattern"},
		{"alias without targets", providers + "models:\n  d: {retries: 1}\n", "config.yaml:6: models.d: no targets"},
		{"provider kind", "providers:\n  p: {kind: openia}\n", `config.yaml:2: providers.p.kind: unknown provider kind "openia"`},
		{"provider without kind", "providers:\n  p: {api_key: k}\n", "config.yaml:2: providers.p: missing kind"},
		{"provider api", "providers:\n  p: {kind: openai, api: completions}\n", `providers.p.api: want chat or responses, got "completions"`},
		{"anthropic api", "providers:\n  p: {kind: anthropic, api: responses}\n", "providers.p.api: applies to kinds openai"},
		{"compatible without base_url", "providers:\n  p: {kind: openai-compatible}\n", "providers.p: kind openai-compatible needs a base_url"},
		{"bad base_url", "providers:\n  p: {kind: openai, base_url: 'ftp://x?token=secret'}\n", "providers.p.base_url: want an absolute http"},
		{"provider with slash", "providers:\n  a/b: {kind: sim}\n", "providers.a/b: a provider name cannot contain /"},
		{"gemini api", "providers:\n  p: {kind: gemini, api_key: k, api: chat}\n", "providers.p.api: applies to kinds openai"},
		{"vertex without project", "providers:\n  p: {kind: vertex, location: global}\n", "providers.p: kind vertex needs a project and a location"},
		{"vertex api_key", "providers:\n  p: {kind: vertex, project: x, location: global, api_key: k}\n", "providers.p.api_key: kind vertex authenticates with Google credentials"},
		{"project elsewhere", "providers:\n  p: {kind: gemini, api_key: k, project: x}\n", "providers.p.project: applies to kind vertex only"},
		{"azure without base_url", "providers:\n  p: {kind: azure, api_key: k}\n", "providers.p: kind azure needs a base_url"},
		{"azure responses deployments", "providers:\n  p: {kind: azure, base_url: 'https://r.openai.azure.com', api_key: k, deployments: true, api: responses}\n", "providers.p.api: responses is served by the v1 API only"},
		{"azure partial client credentials", "providers:\n  p: {kind: azure, base_url: 'https://r.openai.azure.com', client_secret: s}\n", "providers.p: kind azure: client credentials need tenant_id, client_id and client_secret"},
		{"api_version elsewhere", "providers:\n  p: {kind: openai, api_version: '2024-10-21'}\n", "providers.p.api_version: applies to kind azure only"},
		{"bedrock without region", "providers:\n  p: {kind: bedrock}\n", "config.yaml:2: providers.p: kind bedrock needs a region"},
		{"bedrock api", "providers:\n  p: {kind: bedrock, region: us-east-1, api: chat}\n", "providers.p.api: applies to kinds openai"},
		{"region elsewhere", "providers:\n  p: {kind: anthropic, region: us-east-1}\n", "providers.p.region: applies to kind bedrock only"},
		{"imds elsewhere", "providers:\n  p: {kind: openai, imds: true}\n", "providers.p.imds: applies to kind bedrock only"},
		{"bedrock base_url", "providers:\n  p: {kind: bedrock, region: us-east-1, base_url: 'bedrock.local'}\n", "providers.p.base_url: want an absolute http"},
		{"trusted proxy", "auth: {trusted_proxies: [10.0.0.0/8, nonsense]}\n", `config.yaml:1: auth.trusted_proxies[1]: want an address or a CIDR (10.0.0.0/8, ::1), got "nonsense"`},
		{"on_failure", "redis: {on_failure: maybe}\n", `config.yaml:1: redis.on_failure: want open or closed, got "maybe"`},
		{"redis url", "redis: {url: 'http://user:pw@h'}\n", "redis.url: want a redis://"},
		{"redis two forms", "redis: {url: 'redis://h:6379', cluster: {addrs: ['h:7000']}}\n", "redis: set one of url, cluster and sentinel, not url and cluster"},
		{"redis three forms", "redis: {url: 'redis://h', cluster: {addrs: ['h:1']}, sentinel: {master: m, addrs: ['h:2']}}\n", "not url and cluster and sentinel"},
		{"redis cluster no addrs", "redis: {cluster: {password: pw}}\n", "redis.cluster.addrs: want at least one host:port"},
		{"redis cluster addr", "redis: {cluster: {addrs: ['h:7000', 'nohost']}}\n", `redis.cluster.addrs[1]: want host:port, got "nohost"`},
		{"redis sentinel master", "redis: {sentinel: {addrs: ['h:26379']}}\n", "redis.sentinel.master: want the name"},
		{"redis sentinel addrs", "redis: {sentinel: {master: m}}\n", "redis.sentinel.addrs: want at least one host:port"},
		{"midstream", providers + "models:\n  d:\n    targets: [sim/echo]\n    on_midstream_failure: retry\n", `config.yaml:8: models.d.on_midstream_failure: want fail or restart, got "retry"`},
		{"hosted_tools", providers + "models:\n  d:\n    targets: [sim/echo]\n    hosted_tools: ignore\n", `config.yaml:8: models.d.hosted_tools: want drop or refuse, got "ignore"`},
		{"upstream", providers + "models:\n  d: {targets: [sim/echo], upstream: plane}\n", `models.d.upstream: want stream or plain, got "plane"`},
		{"target upstream", providers + "models:\n  d: [{target: sim/echo, upstream: both}]\n", `models.d.targets[0].upstream: want stream or plain, got "both"`},
		{"embeddings upstream", providers + "embeddings:\n  e: [{target: sim/embed, upstream: plain}]\n", "embeddings.e.targets[0].upstream: upstream applies to chat aliases only"},
		{"prompt_cache", providers + "models:\n  d:\n    targets: [sim/echo]\n    prompt_cache: on\n", `config.yaml:8: models.d.prompt_cache: want auto or off, got "on"`},
		{"affinity", providers + "models:\n  d:\n    targets: [sim/echo]\n    affinity: session\n", `config.yaml:8: models.d.affinity: want conversation or off, got "session"`},
		{"shadow target", providers + "models:\n  d: {targets: [sim/echo], shadow: {target: x/y, percent: 5}}\n", `models.d.shadow.target: target "x/y": unknown provider "x"`},
		{"shadow not provider/model", providers + "models:\n  d: {targets: [sim/echo], shadow: {target: sim, percent: 5}}\n", `models.d.shadow.target: want provider/model, got "sim"`},
		{"shadow percent", providers + "models:\n  d: {targets: [sim/echo], shadow: {target: sim/echo, percent: 101}}\n", "models.d.shadow.percent: want a share of the requests above 0 and at most 100, got 101"},
		{"shadow percent zero", providers + "models:\n  d: {targets: [sim/echo], shadow: {target: sim/echo}}\n", "models.d.shadow.percent: want a share"},
		{"hosted_tools empty", providers + "models:\n  d: {targets: [sim/echo], hosted_tools: ''}\n", `models.d.hosted_tools: want drop or refuse, got ""`},
		{"unknown guardrail", providers + "models:\n  d:\n    targets: [sim/echo]\n    guardrails: [a, b]\n", `config.yaml:8: models.d.guardrails[0]: unknown guardrail "a"`},
		{"unknown tool", providers + "models:\n  d:\n    targets: [sim/echo]\n    tools:\n      - t\n", `config.yaml:9: models.d.tools[0]: unknown tool "t"`},
		{"negative retries", providers + "models:\n  d: {targets: [sim/echo], retries: -1}\n", "models.d.retries: must not be negative"},
		{"element retries", providers + "models:\n  d: [{target: sim/echo, retries: -1}]\n", "models.d.targets[0].retries: must not be negative"},
		{"coalesce", providers + "models:\n  d: {targets: [sim/echo], coalesce: {events: 0}}\n", "models.d.coalesce.events: must be positive"},
		{"embedding_model outside embeddings", providers + "models:\n  d: [{target: sim/e, embedding_model: m}]\n", "embedding_model applies to embeddings only"},
		{"embeddings name clash", providers + "models: {e: [sim/a]}\nembeddings: {e: [sim/b]}\n", "embeddings.e: name also used by a model alias"},
		{"listen", "listen: localhost\n", "config.yaml:1: listen: want host:port"},
		{"heartbeat zero", "heartbeat_interval: 0s\n", "heartbeat_interval: must be positive"},
		{"realtime message negative", "realtime: {max_message: -1}\n", "realtime.max_message: invalid size \"-1\""},
		{"realtime message absurd", "realtime: {max_message: 4GiB}\n", "realtime.max_message: want a size from 1B to 1GiB, got 4294967296 bytes"},
		{"realtime ping zero", "realtime: {ping_interval: 0s}\n", "realtime.ping_interval: want a duration from 1s to 1h, got 0s"},
		{"realtime ping absurd", "realtime: {ping_interval: 10ms}\n", "realtime.ping_interval: want a duration from 1s to 1h, got 10ms"},
		{"realtime drain zero", "realtime: {drain_timeout: 0s}\n", "realtime.drain_timeout: want a duration above 0 and at most 1h, got 0s"},
		{"realtime drain negative", "realtime: {drain_timeout: -5s}\n", "realtime.drain_timeout: negative duration"},
		{"realtime drain absurd", "realtime: {drain_timeout: 48h}\n", "realtime.drain_timeout: want a duration above 0 and at most 1h"},
		{"body", "limits: {max_body_bytes: 0}\n", "limits.max_body_bytes: must be positive"},
		{"body timeout", "limits: {body_timeout: 0s}\n", "limits.body_timeout: must be positive"},
		{"pattern regex", "redaction:\n  patterns:\n    - {name: x, regex: '('}\n", "config.yaml:3: redaction.patterns[0].regex: error parsing regexp"},
		{"pattern name", "redaction: {patterns: [{regex: a}]}\n", "redaction.patterns[0].name: want a unique"},
		{"guardrail stage", "guardrails: {g: {kind: pii}}\n", `guardrails.g.stage: want input or output, got ""`},
		{"guardrail kind", "guardrails: {g: {stage: input, kind: vibes}}\n", `guardrails.g.kind: want terms, regex`},
		{"guardrail retry on input", "guardrails: {g: {stage: input, kind: pii, action: retry}}\n", "retry applies to output guardrails only"},
		{"guardrail terms", "guardrails: {g: {stage: input, kind: terms}}\n", "kind terms needs terms"},
		{"guardrail max_size", "guardrails: {g: {stage: input, kind: max_size}}\n", "kind max_size needs a positive max_bytes or max_tokens"},
		{"guardrail schema on input", "guardrails: {g: {stage: input, kind: json_schema}}\n", "guardrails.g.kind: json_schema applies to output guardrails only"},
		{"guardrail mask on output", "guardrails: {g: {stage: output, kind: pii, action: mask}}\n", "mask applies to input guardrails of kind terms, regex or pii"},
		{"key guardrail", "guardrails: {g: {stage: input, kind: pii}}\nkeys: [{name: k, hash: " + strings.Repeat("a", 64) + ", guardrails: [g, h]}]\n", `keys[0].guardrails[1]: unknown guardrail "h"`},
		{"negative price", "prices: {gpt-4o: {input: 1, output: -2}}\n", "prices.gpt-4o: prices must not be negative"},
		{"negative cached price", "prices: {local/llama3: {input: 1, cached_input: -1}}\n", "prices.local/llama3: prices must not be negative"},
		{"negative 1h cache write", "prices: {local/llama3: {input: 1, cache_write_1h: -1}}\n", "prices.local/llama3: prices must not be negative"},
		{"key fields", "keys: [{models: ['*']}]\n", "keys[0].name: want a unique"},
		{"key duplicate hash", "keys: [{name: a, hash: h}, {name: b, hash: h}]\n", "keys[1].hash: want a unique"},
		{"key model", "keys: [{name: a, hash: h, models: [nope]}]\n", `keys[0].models[0]: unknown model alias "nope"`},
		{"key provider", "keys: [{name: a, hash: h, models: [x/y]}]\n", `keys[0].models[0]: unknown provider "x"`},
		{"key limits", "keys: [{name: a, hash: h, limits: {rpm: -1}}]\n", "keys[0].limits.rpm: must not be negative"},
		{"tool both", "tools: {t: {http: {url: 'http://h'}, mcp: {url: 'http://h'}}}\n", "tools.t: set exactly one of http, mcp and sim"},
		{"tool none", "tools: {t: {}}\n", "tools.t: set exactly one of http, mcp and sim"},
		{"tool name", "tools: {'a b': {http: {url: 'http://h'}}}\n", "tools.a b: a tool name must match"},
		{"tool url", "tools: {t: {http: {url: '/x'}}}\n", "tools.t.http.url: want an absolute"},
		{"mcp name", "tools: {a__b: {mcp: {url: 'http://h'}}}\n", "cannot contain __"},
		{"mcp neither", "tools: {m: {mcp: {timeout: 5s}}}\n", "tools.m.mcp: set exactly one of url (Streamable HTTP) and command"},
		{"mcp both", "tools: {m: {mcp: {url: 'http://h', command: npx}}}\n", "tools.m.mcp: set exactly one of url"},
		{"mcp url args", "tools: {m: {mcp: {url: 'http://h', args: [x]}}}\n", "tools.m.mcp: args, env and cwd apply to a command"},
		{"mcp command headers", "tools: {m: {mcp: {command: npx, headers: {a: b}}}}\n", "tools.m.mcp.headers: headers apply to a url"},
		{"mcp env name", "tools: {m: {mcp: {command: npx, env: {'A=B': c}}}}\n", `tools.m.mcp.env: "A=B" is not an environment variable name`},
		{"mcp empty allow", "tools: {m: {mcp: {command: npx, tools: {allow: []}}}}\n", "tools.m.mcp.tools.allow: an empty allow list offers no tool"},
		{"mcp bad pattern", "tools: {m: {mcp: {command: npx, tools: {deny: [echo, 'get-[']}}}}\n", `tools.m.mcp.tools.deny[1]: "get-[" is not a tool name or pattern`},
		{"mcp filter key", "tools: {m: {mcp: {command: npx, tools: {only: [echo]}}}}\n", `unknown key "only" in tools.m.mcp.tools`},
		{"runs", "runs: {max_rounds: 0}\n", "runs.max_rounds: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
}

// An error about a URL never quotes it: it may carry a password or a token.
func TestValidationHidesSecrets(t *testing.T) {
	for _, src := range []string{
		"redis: {url: 'http://user:hunter2@h'}\n",
		"providers: {p: {kind: openai, base_url: 'ftp://h?key=hunter2'}}\n",
		"auth: [hunter2]\n",
		"redis: {url: 'redis://:hunter2@h', cluster: {password: hunter2}, sentinel: {password: hunter2, sentinel_password: hunter2}}\n",
	} {
		_, err := ParseWith([]byte(src), "c.yaml", env())
		if err == nil {
			t.Fatalf("%q: got no error, want one", src)
		}
		if s := err.Error(); strings.Contains(s, "hunter2") {
			t.Errorf("got %q, want no secret in it", s)
		}
	}
}

// The three forms of the redis section decode, each alone, with ${ENV} in the passwords.
func TestRedisForms(t *testing.T) {
	c := mustParse(t, "redis: {cluster: {addrs: ['10.0.0.1:6379', '10.0.0.2:6379'], username: u, password: '${PW}', tls: true}, on_failure: closed}\n", env("PW", "pw"))
	want := &RedisCluster{Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379"}, Username: "u", Password: "pw", TLS: true}
	if !reflect.DeepEqual(c.Redis.Cluster, want) || c.Redis.URL != "" || c.Redis.Sentinel != nil || !c.Redis.Enabled() {
		t.Errorf("cluster: got %+v, want %+v alone", c.Redis, want)
	}
	c = mustParse(t, "redis:\n  sentinel: {master: mymaster, addrs: ['10.0.0.5:26379'], password: a, sentinel_password: b}\n", env())
	ws := &RedisSentinel{Master: "mymaster", Addrs: []string{"10.0.0.5:26379"}, Password: "a", SentinelPassword: "b"}
	if !reflect.DeepEqual(c.Redis.Sentinel, ws) || c.Redis.Cluster != nil {
		t.Errorf("sentinel: got %+v, want %+v alone", c.Redis, ws)
	}
	if c = mustParse(t, "redis: {on_failure: open}\n", env()); c.Redis.Enabled() {
		t.Errorf("no url, cluster or sentinel: got enabled, want in-memory state")
	}
}

func TestPruning(t *testing.T) {
	const src = `
providers:
  openai: {kind: openai, api_key: "${OPENAI_API_KEY}"}
  ant: {kind: anthropic, api_key: "${ANT}"}
  local: {kind: openai-compatible, base_url: "http://127.0.0.1:1/v1"}
models:
  only-openai: [openai/a, {group: [openai/b, ant/c]}]
  mixed: [{group: [openai/a, local/b, ant/c], weights: [1, 2, 3]}, local/d]
auth: {disabled: true, admin_token: t}
`
	c := mustParse(t, src, env("ANT", ""))
	if _, ok := c.Models["only-openai"]; ok {
		t.Errorf("got alias only-openai, want it dropped")
	}
	m := c.Models["mixed"].Targets
	if len(m) != 2 || len(m[0].Targets) != 1 || m[0].Targets[0] != "local/b" || m[0].Weights[0] != 2 {
		t.Errorf("got mixed %+v, want [local/b weight 2, local/d]", m)
	}
	want := []string{
		`provider "ant" (kind anthropic) has an empty api_key: left out of every chain`,
		`provider "openai" (kind openai) has an empty api_key: left out of every chain`,
		`model alias "only-openai" has no usable target: left out`,
		`auth.disabled is ignored: keys or auth.admin_token are configured`,
	}
	if len(c.Warnings) != len(want) {
		t.Fatalf("got warnings %q, want %q", c.Warnings, want)
	}
	for i := range want {
		if c.Warnings[i] != want[i] {
			t.Errorf("warning %d: got %q, want %q", i, c.Warnings[i], want[i])
		}
	}
	if got := c.AliasNames(); len(got) != 1 || got[0] != "mixed" {
		t.Errorf("got aliases %v, want [mixed]", got)
	}
}

// TestPruneCloudKinds: a gemini provider needs its api_key like openai; a bedrock one
// without api_key is kept: its credentials come from the AWS chain, which the gateway checks.
func TestPruneCloudKinds(t *testing.T) {
	c := mustParse(t, `
providers:
  gem: {kind: gemini, api_key: "${GEMINI_API_KEY}"}
  aws: {kind: bedrock, region: us-east-1}
  az:  {kind: azure, base_url: "https://r.openai.azure.com", api_key: "${AZURE_OPENAI_API_KEY}"}
  az2: {kind: azure, base_url: "https://r.openai.azure.com", entra_token: "${TOKEN}"}
models:
  d: [gem/gemini-2.5-flash, aws/amazon.nova-pro-v1:0, az/gpt-4o, az2/gpt-4o]
`, env("GEMINI_API_KEY", "", "AZURE_OPENAI_API_KEY", "", "TOKEN", "eyJ"))
	if _, ok := c.Providers["gem"]; ok || c.Providers["aws"].Kind != "bedrock" || c.Providers["az2"].Kind != "azure" {
		t.Errorf("got providers %v, want gem left out and aws kept", c.Providers)
	}
	if _, ok := c.Providers["az"]; ok {
		t.Errorf("az without credentials kept")
	}
	if len(c.Warnings) != 2 || c.Warnings[0] != `provider "az" (kind azure) has no api_key, entra_token or client_secret: left out of every chain` ||
		c.Warnings[1] != `provider "gem" (kind gemini) has an empty api_key: left out of every chain` {
		t.Errorf("got warnings %q", c.Warnings)
	}
}

// auth.trusted_proxies takes addresses and CIDRs, an address as its whole-length prefix.
func TestTrustedProxies(t *testing.T) {
	a := Auth{TrustedProxies: []string{"10.1.2.3/8", "::1", "192.0.2.7", "::ffff:192.0.2.8"}}
	var got []string
	for _, p := range a.Proxies() {
		got = append(got, p.String())
	}
	if want := "10.0.0.0/8 ::1/128 192.0.2.7/32 192.0.2.8/32"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}
