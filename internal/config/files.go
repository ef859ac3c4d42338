package config

// Files configures the files and batches passed through to the targets that keep them
// (/v1/files, /v1/batches, /v1/messages/batches; docs/files-batches.md, issue 48).
type Files struct {
	// Model is the alias or provider/model whose target keeps an upload, and serves the
	// lists, when the request names none (?model=, X-Sluice-Model, a model field before
	// the file); "": the request must name one.
	Model string `yaml:"model"`
	// AnthropicModel is Model for the list of /v1/messages/batches (a batch's own requests
	// name their model).
	AnthropicModel string `yaml:"anthropic_model"`
	// MaxUpload caps an upload and a message batch's body (default 512MB, as OpenAI's);
	// MaxUploads overrides it per alias.
	MaxUpload  Bytes            `yaml:"max_upload"`
	MaxUploads map[string]Bytes `yaml:"max_uploads"`
	// TTL is how long the gateway remembers an object's owner (default 30d).
	TTL Duration `yaml:"ttl"`
}
