package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDesignExample(t *testing.T) {
	data, err := os.ReadFile("testdata/design.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, string(data), env(
		"SLUICE_ADMIN_TOKEN", "admin-secret", "OPENAI_API_KEY", "sk-openai",
		"ANTHROPIC_API_KEY", "sk-ant", "AZURE_KEY", "azure-secret"))

	if len(c.Warnings) != 0 {
		t.Errorf("got warnings %q, want none", c.Warnings)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	check("listen", c.Listen, "127.0.0.1:8080")
	check("admin token", c.Auth.AdminToken, "admin-secret")
	check("redis", c.Redis, Redis{URL: "redis://127.0.0.1:6379/0", OnFailure: "open", Timeout: millis(250), Spool: 10_000})
	check("heartbeat", c.HeartbeatInterval.Std(), 10*time.Second)
	check("limits", c.Limits, Limits{MaxBodyBytes: 10485760, BodyTimeout: seconds(30), MaxUploadBytes: 25 << 20})

	check("openai", c.Providers["openai"], Provider{Kind: "openai", API: "chat",
		BaseURL: "https://api.openai.com/v1", APIKey: "sk-openai", StreamOptions: true, Stream: true})
	check("oai-resp api", c.Providers["oai-resp"].API, "responses")
	check("anthropic base", c.Providers["anthropic"].BaseURL, "https://api.anthropic.com")
	check("anthropic api", c.Providers["anthropic"].API, "")
	check("local stream_options", c.Providers["local"].StreamOptions, false)
	check("local stream", c.Providers["local"].Stream, true)
	check("azure headers", c.Providers["azure"].Headers, map[string]string{"api-key": "azure-secret"})
	check("azure query", c.Providers["azure"].Query, map[string]string{"api-version": "2025-04-01-preview"})

	d := c.Models["default"]
	alias := Timeouts{Connect: seconds(5), FirstEvent: seconds(120), Idle: seconds(60), Total: seconds(600)}
	check("alias timeouts", d.Timeouts, alias)
	check("elements", len(d.Targets), 4)
	check("element 0", d.Targets[0].Targets, []string{"openai/gpt-4.1-mini"})
	check("element 0 timeouts", d.Targets[0].Timeouts, alias)
	overridden := alias
	overridden.FirstEvent = seconds(30)
	check("element 1 timeouts", d.Targets[1].Timeouts, overridden)
	check("group", d.Targets[2].Targets, []string{"local/llama3", "local/qwen3"})
	check("weights", d.Targets[2].Weights, []int{3, 1})
	check("is group", d.Targets[2].IsGroup(), true)
	check("guardrails", d.Guardrails, []string{"no-secrets-in", "terms-out"})
	check("commit on reasoning", d.CommitOnReasoning, true)
	check("coalesce", d.Coalesce, Coalesce{Events: 1})

	check("pii", c.Redaction.PII, false)
	check("detectors", len(c.Redaction.Detectors), 0)
	check("terms-out mode", c.Guardrails["terms-out"].Mode, "stream")
	check("no-secrets-in action", c.Guardrails["no-secrets-in"].Action, "block")
	check("runs", c.Runs, Runs{MaxRounds: 128, FlushInterval: millis(50), TTL: seconds(86400)})
	check("telemetry", c.Telemetry, Telemetry{Prometheus: true})

	emb := c.Embeddings["embed"].Targets
	check("embed targets", len(emb), 2)
	check("embed azure", emb[1].Targets, []string{"azure/emb"})
	check("embed model", emb[1].EmbeddingModel, "text-embedding-3-small")

	check("aliases", c.AliasNames(), []string{"default"})
	check("targets", c.Targets(), []string{"anthropic/claude-sonnet-4-5", "azure/emb", "local/llama3",
		"local/qwen3", "openai/gpt-4.1-mini", "openai/text-embedding-3-small", "sim/echo"})
}

// With only some keys set, the keyless providers leave every chain, with warnings that name
// them and carry no secret.
func TestDesignExampleWithoutOpenAIKey(t *testing.T) {
	data, err := os.ReadFile("testdata/design.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "sk-ant-SECRET-VALUE"
	c := mustParse(t, string(data), env("ANTHROPIC_API_KEY", secret))

	if _, ok := c.Providers["openai"]; ok {
		t.Errorf("got provider openai, want it pruned")
	}
	var got []string
	for _, e := range c.Models["default"].Targets {
		got = append(got, e.Targets...)
	}
	want := []string{"anthropic/claude-sonnet-4-5", "local/llama3", "local/qwen3", "sim/echo"}
	if !slices.Equal(got, want) {
		t.Errorf("got chain %v, want %v", got, want)
	}
	if got := c.Embeddings["embed"].Targets; len(got) != 1 || got[0].Targets[0] != "azure/emb" {
		t.Errorf("got embeddings chain %+v, want only azure/emb", got)
	}
	wantWarn := []string{
		`provider "azure": header "api-key" is empty`,
		`provider "oai-resp" (kind openai) has an empty api_key: left out of every chain`,
		`provider "openai" (kind openai) has an empty api_key: left out of every chain`,
	}
	if !slices.Equal(c.Warnings, wantWarn) {
		t.Errorf("got warnings %q, want %q", c.Warnings, wantWarn)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, secret) {
			t.Errorf("warning %q carries a secret", w)
		}
	}
}
