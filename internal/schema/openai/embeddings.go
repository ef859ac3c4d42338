package openai

// The embeddings wire (POST /v1/embeddings): the answer. Requests are passed on as the
// client sent them, so only readers that serve them need their members.

// EmbeddingList is the answer, object "list".
type EmbeddingList struct {
	Object string          `json:"object"`
	Data   []Embedding     `json:"data"`
	Model  string          `json:"model"`
	Usage  EmbeddingsUsage `json:"usage"`
}

// Embedding is one input's vector, object "embedding". Embedding is a []float32, or with
// encoding_format base64 a base64 string of little-endian float32s.
type Embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// EmbeddingsUsage is an embeddings answer's token count.
type EmbeddingsUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}
