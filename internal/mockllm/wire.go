package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// apiError is the body of every OpenAI error, in a response or inside a stream; the other
// dialects translate it to their own shape (errorBody).
type apiError = openai.ErrorResponse

func newAPIError(typ, code, msg string) apiError {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = marshal(code)
	}
	return e
}

// openaiErrors writes errors in OpenAI's shape, for the dialects that share it.
type openaiErrors struct{}

func (openaiErrors) errorBody(_ int, e apiError) any { return e }

// scripted answers an HTTP fault, or an in-stream one asked without streaming: error and
// event answer 500, ratelimit 429.
func (openaiErrors) scripted(sc *script, model string) (int, any) {
	status := sc.faultStatus(http.StatusInternalServerError)
	return status, scriptedError(sc, model)
}

// scriptedError is the error body of a fail= fault, OpenAI's shape and wording per status
// unless code=, type= or msg= say otherwise.
func scriptedError(sc *script, model string) apiError {
	typ, code, msg := "invalid_request_error", "", "mockllm: scripted error"
	switch st := sc.status; {
	case sc.fail == "ratelimit" || st == http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."
	case st == http.StatusUnauthorized:
		code, msg = "invalid_api_key", "Incorrect API key provided: sk-mock****. You can find your API key at https://platform.openai.com/account/api-keys."
	case st == http.StatusNotFound:
		code, msg = "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)
	case st == http.StatusRequestEntityTooLarge:
		code, msg = "request_too_large", "Request body too large."
	case st == http.StatusServiceUnavailable:
		typ, msg = "server_error", "The engine is currently overloaded, please try again later."
	case st >= 500 || st == 0:
		typ, msg = "server_error", "The server had an error while processing your request. Sorry about that!"
	}
	if sc.typ != "" {
		typ = sc.typ
	}
	if sc.code != "" {
		code = sc.code
	}
	if sc.msg != "" {
		msg = sc.msg
	}
	return newAPIError(typ, code, msg)
}

// marshal encodes v without HTML escaping (OpenAI sends '<' and '&' as is) and without the
// encoder's trailing newline. The types above cannot fail to encode.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("mockllm: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// dataFrame is one SSE event carrying v as JSON.
func dataFrame(v any) []byte {
	return append(append([]byte("data: "), marshal(v)...), "\n\n"...)
}

var doneFrame = []byte("data: [DONE]\n\n")

// faultStatus is the HTTP status of a scripted fault answered without a stream: fail=STATUS
// as given, ratelimit 429, error and event def (the wire's server error).
func (sc *script) faultStatus(def int) int {
	switch {
	case sc.status != 0:
		return sc.status
	case sc.fail == "ratelimit":
		return http.StatusTooManyRequests
	}
	return def
}
