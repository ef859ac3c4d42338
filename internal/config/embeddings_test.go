package config

import "testing"

func TestEmbeddingModels(t *testing.T) {
	const provs = `providers:
  openai: {kind: openai, api_key: k}
  azure:  {kind: openai-compatible, base_url: "https://x.openai.azure.com/openai/deployments/d"}
  claude: {kind: anthropic, api_key: k}
  simant: {kind: sim, api: anthropic}
`
	errs := []struct{ name, src, want string }{
		{"mixed models", provs + "embeddings:\n  e:\n    - openai/text-embedding-3-small\n    - openai/text-embedding-3-large\n",
			`config.yaml:9: embeddings.e.targets[1]: target "openai/text-embedding-3-large" serves embedding model "text-embedding-3-large", but embeddings.e.targets[0] serves "text-embedding-3-small"`},
		{"deployment named otherwise", provs + "embeddings:\n  e: [openai/text-embedding-3-small, azure/emb]\n",
			`embeddings.e.targets[1]: target "azure/emb" serves embedding model "emb"`},
		{"embedding_model says another", provs + "embeddings:\n  e:\n    targets:\n      - openai/text-embedding-3-small\n      - {target: azure/emb, embedding_model: text-embedding-ada-002}\n",
			`config.yaml:10: embeddings.e.targets[1]: target "azure/emb" serves embedding model "text-embedding-ada-002"`},
		{"mixed group", provs + "embeddings:\n  e: [{group: [openai/a, azure/b]}]\n",
			`target "azure/b" serves embedding model "b", but embeddings.e.targets[0] serves "a"`},
		{"anthropic", provs + "embeddings:\n  e: [claude/x]\n",
			`embeddings.e.targets[0]: target "claude/x": provider "claude" does not serve embeddings`},
		{"sim speaking anthropic", provs + "embeddings:\n  e: [simant/embed]\n",
			`target "simant/embed": provider "simant" does not serve embeddings`},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
	ok := []string{
		provs + "embeddings:\n  e: [openai/text-embedding-3-small, {target: azure/emb, embedding_model: text-embedding-3-small}]\n",
		provs + "embeddings:\n  e: [{group: [azure/a, azure/b], embedding_model: m}, {target: openai/m}]\n",
		provs + "embeddings:\n  e: [openai/text-embedding-3-small]\n  f: [openai/text-embedding-3-large]\n",
	}
	for _, src := range ok {
		mustParse(t, src, env())
	}
}

// The other plain endpoints' sections (issue 48): each target's kind serves the endpoint, as
// the kind table says; embedding_model is the embeddings' only; a name is not a model alias's.
func TestPlainSections(t *testing.T) {
	const provs = `providers:
  openai: {kind: openai, api_key: k}
  vllm:   {kind: openai-compatible, base_url: "http://127.0.0.1:8000/v1"}
  claude: {kind: anthropic, api_key: k}
  sim:    {kind: sim}
  simant: {kind: sim, api: anthropic}
models:
  default: [sim/echo]
`
	errs := []struct{ name, src, want string }{
		{"anthropic moderations", provs + "moderations:\n  m: [claude/x]\n",
			`moderations.m.targets[0]: target "claude/x": provider "claude" does not serve moderations`},
		{"openai rerank", provs + "rerank:\n  r: [vllm/bge, openai/rerank]\n",
			`rerank.r.targets[1]: target "openai/rerank": provider "openai" does not serve rerank`},
		{"sim speaking anthropic", provs + "images:\n  i: [simant/image]\n",
			`images.i.targets[0]: target "simant/image": provider "simant" does not serve images`},
		{"embedding_model", provs + "images:\n  i:\n    - {target: openai/dall-e-3, embedding_model: x}\n",
			`images.i.targets[0]: embedding_model applies to embeddings only`},
		{"a model alias's name", provs + "moderations:\n  default: [openai/omni-moderation-latest]\n",
			`moderations.default: name also used by a model alias`},
		{"unknown provider", provs + "rerank:\n  r: [cohere/rerank-v3.5]\n", `unknown provider "cohere"`},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
	c := mustParse(t, provs+"moderations:\n  m: [openai/omni-moderation-latest, sim/moderation]\nimages:\n  i: [openai/dall-e-3]\n"+
		"rerank:\n  r: [vllm/bge-reranker, sim/rerank]\nkeys:\n  - {name: k, hash: "+hashA+", models: [m, r]}\n", env())
	if got := c.Targets(); len(got) != 6 {
		t.Errorf("Targets() = %v, want the five plain targets and sim/echo", got)
	}
}

// The clouds serve image generation and its edits (issue 48): the kind table's Images and
// ImageEdits, read per path by the images section.
func TestImageEditsServed(t *testing.T) {
	var c Config
	i := c.Plain()[2]
	if i.Name != "images" {
		t.Fatalf("section 2 is %s", i.Name)
	}
	for _, tt := range []struct {
		p         Provider
		gen, edit bool
	}{{Provider{Kind: "openai"}, true, true}, {Provider{Kind: "openai-compatible"}, true, true},
		{Provider{Kind: "bedrock"}, true, true}, {Provider{Kind: "vertex"}, true, true},
		{Provider{Kind: "sim", API: "anthropic"}, false, false}, {Provider{Kind: "anthropic"}, false, false}} {
		if gen, edit := i.ServesOn(tt.p, "images/generations"), i.ServesOn(tt.p, "images/edits"); gen != tt.gen || edit != tt.edit || i.Serves(tt.p) != gen {
			t.Errorf("%s %s: generations %v, edits %v; want %v, %v", tt.p.Kind, tt.p.API, gen, edit, tt.gen, tt.edit)
		}
	}
	mustParse(t, "providers:\n  br: {kind: bedrock, region: us-east-1}\n  vx: {kind: vertex, project: p, location: us-central1}\n"+
		"images:\n  i: [br/amazon.nova-canvas-v1:0, vx/imagen-3.0-generate-002]\n", env())
}
