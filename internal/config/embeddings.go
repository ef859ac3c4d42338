package config

import "fmt"

// PlainSection is a section of aliases of a plain endpoint (issue 48): its key, the path its
// targets serve it on, its aliases, and which kinds serve it (Kind's field). Also are the
// other paths its aliases serve (images: images/edits), by the kinds alsoServes says.
type PlainSection struct {
	Name, Path string
	Aliases    map[string]Embedding
	serves     func(Kind) func(Provider) bool
	Also       []string
	alsoServes func(Kind) func(Provider) bool
}

// Paths are the paths the section's aliases serve: Path, then Also.
func (s PlainSection) Paths() []string { return append([]string{s.Path}, s.Also...) }

// Plain returns the sections of the plain endpoints, embeddings first. The maps are c's.
func (c *Config) Plain() []PlainSection {
	return []PlainSection{
		{"embeddings", "embeddings", c.Embeddings, func(k Kind) func(Provider) bool { return k.Embeddings }, nil, nil},
		{"moderations", "moderations", c.Moderations, func(k Kind) func(Provider) bool { return k.Moderations }, nil, nil},
		{"images", "images/generations", c.Images, func(k Kind) func(Provider) bool { return k.Images },
			[]string{"images/edits"}, func(k Kind) func(Provider) bool { return k.ImageEdits }},
		{"rerank", "rerank", c.Rerank, func(k Kind) func(Provider) bool { return k.Rerank }, nil, nil},
		{"transcriptions", "audio/transcriptions", c.Transcriptions, func(k Kind) func(Provider) bool { return k.Audio }, nil, nil},
		{"speech", "audio/speech", c.Speech, func(k Kind) func(Provider) bool { return k.Audio }, nil, nil},
	}
}

// Serves reports whether a provider of kind serves the section's endpoint.
func (s PlainSection) Serves(p Provider) bool { return s.ServesOn(p, s.Path) }

// ServesOn reports whether a provider of kind serves path, one of the section's Paths.
func (s PlainSection) ServesOn(p Provider, path string) bool {
	k, _ := kindOf(p.Kind)
	f := s.serves(k)
	if path != s.Path {
		f = s.alsoServes(k)
	}
	return f != nil && f(p)
}

// served checks that every target of a plain section's alias serves its endpoint.
func (v *validator) served(c *Config, s PlainSection, path string, es []Element) {
	for i, e := range es {
		for _, t := range e.Targets {
			prov, _, ok := SplitTarget(t)
			if pr, known := c.Providers[prov]; ok && known && !s.Serves(pr) {
				v.errorf(fmt.Sprintf("%s.targets[%d]", path, i), "target %q: provider %q does not serve %s", t, prov, s.Name)
			}
		}
	}
}

// chatServed checks that every target of a chat alias is of a provider whose kind serves
// chat (Kind.NoChat: a reranker's API does not).
func (v *validator) chatServed(c *Config, path string, es []Element) {
	for i, e := range es {
		for _, t := range e.Targets {
			prov, _, _ := SplitTarget(t)
			if k, _ := kindOf(c.Providers[prov].Kind); k.NoChat {
				v.errorf(fmt.Sprintf("%s.targets[%d]", path, i), "target %q: provider %q of kind %s serves no chat, only its plain endpoints (rerank, embeddings)", t, prov, k.Name)
			}
		}
	}
}

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
