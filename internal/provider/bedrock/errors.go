package bedrock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// origin is the upstream an answer comes from: its name, which errors start with, and the
// scrubber of what it writes in them. Every error built from the upstream's words goes
// through statusError or exception, which scrub it (issue 19).
type origin struct {
	name  string
	scrub llm.Scrub
}

// errorType is the short name of an AWS error type as X-Amzn-ErrorType or "__type" give it
// ("ThrottlingException:http://internal.amazon.com/...", "com.amazon.bedrock#ValidationException").
func errorType(s string) string {
	s, _, _ = strings.Cut(s, ":")
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// statusError maps a non-2xx answer before the stream to an *llm.Error, scrubbed. The AWS
// error type (ValidationException, ThrottlingException, ...) is kept as Type.
func (o origin) statusError(status int, h http.Header, body []byte) *llm.Error {
	var ex bedrock.Exception
	json.Unmarshal(body, &ex)
	typ := errorType(h.Get("X-Amzn-Errortype"))
	if typ == "" {
		typ = errorType(ex.Type)
	}
	// 400 ValidationException, 404 ResourceNotFoundException (a model id the account cannot
	// use); 401, 403 AccessDeniedException, UnrecognizedClientException,
	// InvalidSignatureException; 429 ThrottlingException, ServiceQuotaExceededException; 408
	// ModelTimeoutException, 424 ModelErrorException, 5xx: the upstream failing. But a 429
	// ModelNotReadyException is the model still loading, not a rate limit.
	kind := transport.StatusKind(status)
	if status == 429 && typ == "ModelNotReadyException" {
		kind = llm.Unavailable
	}
	e := transport.StatusError(o.name, kind, status, fmt.Sprintf("HTTP %d %s", status, typ),
		transport.ErrorMessage(ex.Message, body, status), transport.RetryAfter(h, time.Now()))
	e.Type = typ
	return o.scrub.Error(e)
}

// exception maps an exception (or error) frame inside a 200 stream. DESIGN §3: whatever
// its type, it is the upstream failing mid-answer, so before commit the chain falls back:
// RateLimited for throttlingException, Unavailable for the rest (validationException too:
// a request Bedrock refuses up front comes as HTTP 400, which is Invalid). Scrubbed.
func (o origin) exception(typ string, ex bedrock.Exception) *llm.Error {
	msg := ex.Message
	if msg == "" {
		msg = "exception without a message"
	}
	if ex.OriginalStatusCode != 0 {
		// modelStreamErrorException: the model's own failure, with its status.
		msg = fmt.Sprintf("%s (model status %d)", msg, ex.OriginalStatusCode)
	}
	e := &llm.Error{Kind: llm.Unavailable, Type: typ, Message: o.name + " stream " + typ + ": " + msg}
	if typ == bedrock.ExceptionThrottling {
		e.Kind = llm.RateLimited
	}
	return o.scrub.Error(e)
}
