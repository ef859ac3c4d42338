package gemini

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// API is the Gemini wire, GET /v1beta/models its model list and GET /v1beta/models/{model}
// one model. Echo routes a whole segment at most, so each prefix takes every
// POST under models/ and Decode splits "{model}:{method}" itself; under /v1 only POST, since
// GET /v1/models/* is the OpenAI model list (the @google/genai SDK posts to /v1/models/...).
var API = dialect.API{
	Name: "gemini",
	Routes: []dialect.Route{
		{Method: http.MethodGet, Path: "/v1beta/models", Op: dialect.List},
		{Method: http.MethodGet, Path: "/v1beta/models/*", Op: dialect.Model},
		{Method: http.MethodPost, Path: "/v1beta/models/*", Op: dialect.Call},
		{Method: http.MethodPost, Path: "/v1/models/*", Op: dialect.Call},
	},
	Credential: dialect.XGoogAPIKey | dialect.KeyQuery | dialect.Bearer | dialect.XAPIKey,
	Decode:     Decode,
	Error:      func(err error, _ []llm.Attempt) (int, []byte) { return Error(err) },
	// A bare line break: whitespace between the elements of the JSON array, and a blank line,
	// which dispatches nothing, between SSE events. A ": keepalive" comment would break the
	// array.
	Keepalive: []byte("\r\n"),
	Counted:   func(n int) []byte { return []byte(`{"totalTokens":` + strconv.Itoa(n) + `}`) },
	Listed:    List,
	Described: func(m string) []byte { return appendModel(nil, m) },
	// Without alt=sse a stream is one JSON array, which Google serves as JSON.
	StreamType: func(query func(string) string) string {
		if query("alt") == "sse" {
			return ""
		}
		return "application/json; charset=UTF-8"
	},
}

// List is the body of GET /v1beta/models: the aliases and direct targets as Google lists
// its models, {"models":[{"name":"models/...",...}]}, each with the methods the wire serves.
func List(models []string) []byte {
	b := []byte(`{"models":[`)
	for i, m := range models {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendModel(b, m)
	}
	return append(b, "]}"...)
}

// appendModel appends m as Google describes a model (GET /v1beta/models/{model}): its name
// under models/, and the methods the wire serves.
func appendModel(b []byte, m string) []byte {
	b = append(b, `{"name":`...)
	b = oai.AppendString(b, "models/"+m)
	b = append(b, `,"displayName":`...)
	b = oai.AppendString(b, m)
	return append(b, `,"supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens"]}`...)
}

// Methods of a model, after the ":" of the path.
const (
	generate = "generateContent"
	stream   = "streamGenerateContent"
	count    = "countTokens"
)

// Decode decodes a request of a Gemini route: the model and method from the path (the
// route's "*"), the body by the method, the stream's framing from alt.
func Decode(body []byte, in dialect.Input) (*dialect.Decoded, error) {
	model, method, err := Path(in.Param("*"))
	if err != nil {
		return nil, err
	}
	if method == count {
		r, err := DecodeCount(body)
		if err != nil {
			return nil, err
		}
		return &dialect.Decoded{Model: model, Req: &r.Req, Op: dialect.Count, Estimate: func() int { return Estimate(&r.Req) }}, nil
	}
	r, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	r.Req.Stream = method == stream
	// Gemini and Vertex targets get the client's body as it came (the model is the path's),
	// so thoughtSignatures and members the translation does not carry reach them whole.
	r.Req.Native = &llm.Native{Wire: "gemini", Body: body}
	if r.CachedContent != "" {
		r.Req.Native.Only = []string{"cachedContent"}
	}
	sse := query(in, "alt") == "sse"
	return &dialect.Decoded{Model: model, Req: &r.Req, Answer: func(id string) dialect.Wire {
		return NewWire(id, sse, r.Thoughts)
	}}, nil
}

func query(in dialect.Input, name string) string {
	if in.Query == nil {
		return ""
	}
	return in.Query(name)
}

// Path splits the rest of a models/ path, "{model}:{method}", into the model (an alias, or a
// "provider/model") and the method. A path without a method, or with one the gateway does
// not serve, is Google's 404; so is an empty model.
func Path(rest string) (model, method string, err error) {
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", "", notFound("Method not found: the path must be models/{model}:generateContent, " +
			":streamGenerateContent or :countTokens, got models/" + rest + ".")
	}
	model, method = strings.TrimPrefix(rest[:i], "models/"), rest[i+1:]
	switch method {
	case generate, stream, count:
	default:
		return "", "", notFound("Method not found: models/{model}:" + method + " (the gateway serves generateContent, " +
			"streamGenerateContent and countTokens).")
	}
	if model == "" {
		return "", "", notFound("models/:" + method + ": the path names no model.")
	}
	return model, method, nil
}
