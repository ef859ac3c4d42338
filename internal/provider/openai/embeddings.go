package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/internal/llm"
)

// maxEmbeddingBody caps a plain answer held in memory (the largest: embeddings): 2048 inputs of 3072 dimensions,
// as JSON floats, are about 130 MB.
const maxEmbeddingBody = 256 << 20

// Plain calls POST {base}/{path} (embeddings, moderations, images/generations, rerank)
// with body, a JSON object passed on as the client sent it except for its model member,
// which becomes model. It returns the upstream's JSON answer
// unchanged. A non-2xx answer, a connection failure, or a 200 that carries an error object
// or is not JSON is an *llm.Error, mapped as for a chat call, so the chain decides fallback
// the same way. Any OpenAI-compatible provider serves it, whichever API its chats use.
func (c *conn) Plain(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	b, err := withModel(body, model)
	if err != nil {
		return nil, &llm.Error{Kind: llm.Invalid, Message: "the " + path + " request is not a JSON object"}
	}
	var res *http.Response
	// The raw response, body unread, as for chat (see conn.post); JSON this time.
	err = c.sdk.Post(ctx, path, nil, &res, option.WithRequestBody("application/json", b),
		option.WithHeader("Accept", "application/json"))
	if err != nil {
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		return nil, c.callError(ctx, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, maxEmbeddingBody+1))
	if err != nil {
		if e := llm.ContextError(ctx); e != nil {
			return nil, e
		}
		return nil, &llm.Error{Kind: llm.Unavailable, Message: c.name + ": reading the " + path + " answer failed", Err: err}
	}
	if len(out) > maxEmbeddingBody {
		return nil, &llm.Error{Kind: llm.Unavailable, Message: c.name + ": the " + path + " answer is larger than the gateway's limit"}
	}
	if we := parseErrorBody(out); we.Message != "" {
		return nil, c.inStreamError(we) // an error with status 200: the upstream failed
	}
	if !json.Valid(out) {
		return nil, &llm.Error{Kind: llm.Unavailable, Status: res.StatusCode,
			Message: c.name + " answered the " + path + " call with something other than JSON"}
	}
	return out, nil
}

// withModel returns the JSON object body with its model member set to model and written
// first; the other members keep their order and bytes.
func withModel(body []byte, model string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(model) + 16)
	b.WriteString(`{"model":`)
	writeString(&b, model)
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		if key == "model" {
			continue
		}
		b.WriteByte(',')
		writeString(&b, key)
		b.WriteByte(':')
		b.Write(raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
