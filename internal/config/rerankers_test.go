package config

import "testing"

// The rerankers' kinds (issue 48): cohere, jina and voyage take their API's base URL by
// default, serve rerank (and cohere and voyage embeddings), serve no chat, take no api, and
// need their api_key: without one they are left out with a warning, so the embedded default
// runs without keys.
func TestRerankerKinds(t *testing.T) {
	const provs = `providers:
  co: {kind: cohere, api_key: k}
  ji: {kind: jina, api_key: k}
  vo: {kind: voyage, api_key: k}
  sim: {kind: sim}
models:
  default: [sim/echo]
`
	c := mustParse(t, provs+`rerank:
  rr: [co/rerank-v3.5, ji/jina-reranker-v2-base-multilingual, vo/rerank-2.5]
embeddings:
  e: [{target: co/embed-v4.0, embedding_model: m}, {target: vo/voyage-3.5, embedding_model: m}]
`, env())
	for name, base := range map[string]string{"co": "https://api.cohere.com", "ji": "https://api.jina.ai/v1", "vo": "https://api.voyageai.com/v1"} {
		if got := c.Providers[name].BaseURL; got != base {
			t.Errorf("%s: got base_url %q, want %q", name, got, base)
		}
	}
	if len(c.Rerank["rr"].Targets) != 3 || len(c.Embeddings["e"].Targets) != 2 {
		t.Errorf("got rerank %+v, embeddings %+v, want every target kept", c.Rerank["rr"], c.Embeddings["e"])
	}

	errs := []struct{ name, src, want string }{
		{"chat on cohere", provs + "  chat: [sim/echo, co/command-a]\n",
			`models.chat.targets[1]: target "co/command-a": provider "co" of kind cohere serves no chat`},
		{"chat on voyage in a group", provs + "  chat: [{group: [sim/echo, vo/rerank-2.5]}]\n",
			`models.chat.targets[0]: target "vo/rerank-2.5": provider "vo" of kind voyage serves no chat`},
		{"jina embeddings", provs + "embeddings:\n  e: [ji/jina-embeddings-v3]\n",
			`embeddings.e.targets[0]: target "ji/jina-embeddings-v3": provider "ji" does not serve embeddings (want kind openai, openai-compatible, bedrock, vertex, cohere, voyage, or sim not speaking anthropic)`},
		{"cohere moderations", provs + "moderations:\n  m: [co/x]\n",
			`moderations.m.targets[0]: target "co/x": provider "co" does not serve moderations`},
		{"voyage api", "providers:\n  vo: {kind: voyage, api_key: k, api: chat}\n", `providers.vo.api: ` + noAPI},
		{"jina region", "providers:\n  ji: {kind: jina, api_key: k, region: us-east-1}\n", `providers.ji.region: applies to kind bedrock only`},
		{"cohere bad base_url", "providers:\n  co: {kind: cohere, api_key: k, base_url: \"api.cohere.com\"}\n", `providers.co.base_url: want an absolute http:// or https:// URL`},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}

	c = mustParse(t, `providers:
  co: {kind: cohere, api_key: "${COHERE_API_KEY}"}
  sim: {kind: sim}
models:
  default: [sim/echo]
rerank:
  rr: [co/rerank-v3.5, sim/rerank]
`, env("COHERE_API_KEY", ""))
	if _, ok := c.Providers["co"]; ok || len(c.Rerank["rr"].Targets) != 1 {
		t.Errorf("got providers %v, rerank %+v: want co, without its key, left out", c.Providers, c.Rerank["rr"])
	}
	if len(c.Warnings) != 1 || c.Warnings[0] != `provider "co" (kind cohere) has an empty api_key: left out of every chain` {
		t.Errorf("got warnings %q", c.Warnings)
	}
}

// The clouds (issue 48): bedrock and vertex serve rerank and embeddings with their own
// APIs, next to their chat; not moderations.
func TestCloudPlainKinds(t *testing.T) {
	const provs = `providers:
  br: {kind: bedrock, region: us-west-2}
  vx: {kind: vertex, project: p, location: us-central1}
models:
  default: [br/anthropic.claude-3-haiku-20240307-v1:0, vx/gemini-2.5-flash]
`
	c := mustParse(t, provs+`rerank:
  rr: [br/cohere.rerank-v3-5:0, vx/semantic-ranker-default@latest]
embeddings:
  titan: [br/amazon.titan-embed-text-v2:0]
  gecko: [vx/text-embedding-005]
`, env())
	if len(c.Rerank["rr"].Targets) != 2 || len(c.Embeddings["titan"].Targets) != 1 || len(c.Embeddings["gecko"].Targets) != 1 {
		t.Errorf("got rerank %+v, embeddings %+v, want every target kept", c.Rerank["rr"], c.Embeddings)
	}
	checkErr(t, provs+"moderations:\n  m: [br/x]\n", `moderations.m.targets[0]: target "br/x": provider "br" does not serve moderations`)
}
