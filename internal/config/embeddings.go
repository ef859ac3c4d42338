package config

import "fmt"

// embeddingModels checks an embeddings chain: every target is of a provider that serves the
// OpenAI embeddings endpoint, and all serve the same embedding model, since vectors of
// different models are not interchangeable and the chain falls back from one to the next. A
// target's embedding model is its model name unless its element says embedding_model (an
// Azure deployment named otherwise).
func (v *validator) embeddingModels(c *Config, path string, es []Element) {
	first, firstPath := "", ""
	for i, e := range es {
		p := fmt.Sprintf("%s.targets[%d]", path, i)
		for _, t := range e.Targets {
			prov, model, ok := SplitTarget(t)
			pr, known := c.Providers[prov]
			if !ok || !known {
				continue // reported by chain
			}
			if k, _ := kindOf(pr.Kind); k.Embeddings == nil || !k.Embeddings(pr) {
				v.errorf(p, "target %q: provider %q does not serve embeddings "+noEmbeddings, t, prov)
				continue
			}
			if e.EmbeddingModel != "" {
				model = e.EmbeddingModel
			}
			switch {
			case first == "":
				first, firstPath = model, p
			case model != first:
				v.errorf(p, "target %q serves embedding model %q, but %s serves %q: vectors of "+
					"different models are not interchangeable (set embedding_model if it is the same "+
					"model under another name)", t, model, firstPath, first)
			}
		}
	}
}
