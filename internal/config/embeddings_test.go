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
