package dialect

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Op is what the edge does with a request of a route. Every wire's routes are served by these
// few operations, so adding a wire adds an API value, not a handler.
type Op uint8

const (
	// Call is a model call answered by rounds, streamed or not, on Decoded.Answer's wire.
	Call Op = iota + 1
	// Embed is a plain call (embeddings, moderations, images, rerank): one JSON answer from
	// the path API.Upstream of a target of the wire's own aliases, passed through.
	Embed
	// Count counts a request's input tokens: a target of the alias that can, else
	// Decoded.Estimate.
	Count
	// Run starts a frontend run (Decoded.Native is the wire's own request); Resume reads a
	// run's stream again, Stop stops it.
	Run
	Resume
	Stop
	// List is the model list; Model one model of it (the rest of the path).
	List
	Model
	// MCP is the MCP gateway's Streamable HTTP.
	MCP
	// Kept reads or deletes what a wire keeps for the caller's key (a stored response:
	// API.Kept answers it).
	Kept
	// Object is a call of a target's stored-object API (files, batches: llm.ObjectHost),
	// passed through by the server's Options.Objects (package objects), which admits it.
	Object
	// Media is a plain call (speech, transcriptions, image edits: issue 48) whose answer is
	// passed through as it comes, with its media type (turn.Pass); its request is JSON, or
	// multipart read by the wire itself (API.Streamed).
	Media
	// Realtime is a Realtime session over a WebSocket (issue 48): admitted once at connect,
	// then served by package live.
	Realtime
)

// Models reports whether a request of op names a model and is admitted (keys' model access,
// rate limits, guardrails, budget) once decoded.
func (op Op) Models() bool { return op >= Call && op <= Run || op == Media || op == Realtime }

// Plain reports whether op is a plain call: served by its wire's own aliases (API.Upstream),
// its input neither redacted nor screened, no answer tokens estimated.
func (op Op) Plain() bool { return op == Embed || op == Media }

// Route is one method and path of a wire. A path may hold a parameter (":chatId") or end in
// "*"; a suffix inside a segment (Gemini's "{model}:generateContent") is the wire's decoder's
// to split, after routing.
type Route struct {
	Method, Path string
	Op           Op
}

// Credential is the set of places a wire's clients carry their key in.
type Credential uint8

const (
	Bearer      Credential = 1 << iota // Authorization: Bearer KEY (the OpenAI SDKs)
	XAPIKey                            // x-api-key: KEY (the Anthropic SDKs)
	XGoogAPIKey                        // x-goog-api-key: KEY (Google's SDKs)
	KeyQuery                           // ?key=KEY
	Subprotocol                        // Sec-WebSocket-Protocol: openai-insecure-api-key.KEY (browsers' Realtime)
)

// keyProtocol prefixes the WebSocket subprotocol that carries a browser's key.
const keyProtocol = "openai-insecure-api-key."

// Secret is the key r carries in the first of c's places that holds one ("": none).
func (c Credential) Secret(r *http.Request) string {
	if c&Bearer != 0 {
		if scheme, v, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(v)
		}
	}
	for _, p := range []struct {
		in     Credential
		header string
	}{{XAPIKey, "X-Api-Key"}, {XGoogAPIKey, "X-Goog-Api-Key"}} {
		if c&p.in != 0 {
			if v := strings.TrimSpace(r.Header.Get(p.header)); v != "" {
				return v
			}
		}
	}
	if c&KeyQuery != 0 {
		if v := strings.TrimSpace(r.URL.Query().Get("key")); v != "" {
			return v
		}
	}
	if c&Subprotocol != 0 {
		for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
			for p := range strings.SplitSeq(v, ",") {
				if k, ok := strings.CutPrefix(strings.TrimSpace(p), keyProtocol); ok {
					return k
				}
			}
		}
	}
	return ""
}

// PathParams reads the parameters of u's path, which param reads as the router found them,
// unescaped whatever the path holds. echo routes on the escaped path (URL.RawPath) when
// net/http kept one, that is when the path holds an escaped '/' or a byte escaped unusually,
// and its parameters are then escaped; otherwise on URL.Path, already unescaped. Unescaping
// the first kind only, an id with a '/', a '%' or a space is found whichever way its client
// escaped it (issue 47).
func PathParams(param func(name string) string, u *url.URL) func(name string) string {
	if u.RawPath == "" {
		return param
	}
	return func(name string) string {
		v := param(name)
		if s, err := url.PathUnescape(v); err == nil {
			return s
		}
		return v
	}
}

// Input is what a request is decoded from besides its body.
type Input struct {
	Op     Op
	Header func(name string) string
	Param  func(name string) string // a parameter of the route's path
	Query  func(name string) string // a parameter of the URL's query (Gemini's alt=sse)
	// Method is the request's method, and Route its route's path as the table names it
	// (Kept: which of the wire's routes).
	Method, Route string
	// State is what the wire may keep between requests (nil or a nil Store: nothing), and
	// Key the id of the caller's key that scopes it ("": auth is off).
	State *State
	Key   string
	// Record is the request's own id (its record's in the request log), unique where the
	// X-Request-Id the client chose may not be (issue 47).
	Record string
	// Body is the request's body, unread, within its limits (its bytes, its time), for a wire
	// that reads it itself (API.Streamed); nil for the others, whose body is read whole.
	Body io.Reader
}

// Store keeps a wire's state between requests (the Responses API's stored responses), by
// id, on every replica: in Redis when one is configured, else in this process, bounded
// (package gateway picks). Safe for concurrent use.
type Store interface {
	// Get returns the value of id, or nil, nil when there is none (never kept, deleted,
	// expired or evicted).
	Get(ctx context.Context, id string) ([]byte, error)
	// Add keeps val under id for ttl unless id is kept already (false: the first stays).
	Add(ctx context.Context, id string, val []byte, ttl time.Duration) (bool, error)
	// Delete forgets id and reports whether it was kept.
	Delete(ctx context.Context, id string) (bool, error)
}

// State is what the wires may keep between requests: the store, and how long an entry of
// each alias lasts (its ttl).
type State struct {
	Store Store
	TTL   func(alias string) time.Duration
}

// On reports whether st keeps anything.
func (st *State) On() bool { return st != nil && st.Store != nil }

// Decoded is a request of a model route, decoded and validated.
type Decoded struct {
	Model string
	// Req is the request in the vocabulary: what admission estimates and screens, what the
	// chain serves.
	Req *llm.Request
	// Answer is the wire of the answer to the request whose id is id (Call).
	Answer func(id string) Wire
	// Needs names the request's member that only an OpenAI Responses upstream can serve
	// ("": any target can).
	Needs string
	// Estimate is the gateway's own count of the input tokens (Count).
	Estimate func() int
	// Native is the wire's own request, for an op that needs more than Req (Run).
	Native any
	// Op is the request's op when its route serves more than one, which only the path's
	// suffix tells apart (Gemini's {model}:countTokens beside :generateContent); 0: the route's.
	Op Op
	// Resume completes Req with what the wire kept for it (the conversation a
	// previous_response_id names) once its input was redacted, before it is admitted; it
	// may change Needs. Keep keeps what the answer leaves for a later request (a stored
	// response) once the request was served by alias's chain; it does nothing when the
	// answer did not complete. nil: nothing to do.
	Resume func(ctx context.Context) error
	Keep   func(ctx context.Context, alias string) error
	// Bill is what a Media request is billed for, read from its answer (nil when the answer
	// was too large to keep: the request's own word then, as a speech's characters always);
	// false: nothing known, the call is counted, not priced. nil: never priced.
	Bill func(answer []byte) (llm.Usage, bool)
}

// Resumed runs d.Resume, if any.
func (d *Decoded) Resumed(ctx context.Context) error {
	if d.Resume == nil {
		return nil
	}
	return d.Resume(ctx)
}

// Of is the op d is served by: its own, else the route's op.
func (d *Decoded) Of(op Op) Op {
	if d.Op != 0 {
		return d.Op
	}
	return op
}

// API is one client wire as the edge serves it: its routes, where its clients carry their
// key, how its requests decode, and how it answers before the first byte. Each wire package
// declares one; the server's route table lists them. Read-only.
type API struct {
	Name       string
	Routes     []Route
	Credential Credential
	// Decode decodes a request of one of the model routes (Op.Models).
	Decode func(body []byte, in Input) (*Decoded, error)
	// Error is the status and body of err answered before the first byte; tries are the
	// chain's attempts so far.
	Error func(err error, tries []llm.Attempt) (int, []byte)
	// Retried is a status the wire's SDKs retry by design (Anthropic's 529 overloaded): it
	// never goes with x-should-retry: false (0: none).
	Retried int
	// Keepalive is the event stream's heartbeat frame (nil: the ": keepalive" comment).
	Keepalive []byte
	// RequestID names a header that carries the request id besides X-Request-Id ("": none).
	RequestID string
	// Challenge is the WWW-Authenticate of a 401 ("": none).
	Challenge string
	// Counted is the body of a token count of n tokens (a Count route's answer).
	Counted func(n int) []byte
	// Listed is the body of the model list of models (a List route's answer).
	Listed func(models []string) []byte
	// Kept is the status and body of a Kept route's answer.
	Kept func(ctx context.Context, in Input) (int, []byte)
	// Described is the body of one model of the list (a Model route's answer).
	Described func(model string) []byte
	// Upstream is the path an Embed route is served by on its targets ("embeddings",
	// "moderations", ...), and the name of the configuration's section of its aliases;
	// Usage reads an answer's usage (false: none, the call is counted, not priced).
	Upstream string
	Usage    func(answer []byte) (llm.Usage, bool)
	// Streamed: the wire reads its requests' bodies itself from Input.Body (a multipart
	// upload, its files spooled), the edge does not read them.
	Streamed bool
	// StreamType is the media type of a streamed answer given the request's query ("" or
	// nil: text/event-stream).
	StreamType func(query func(name string) string) string
}

// RetryAfter sets Retry-After on h, in whole seconds rounded up, for an error that says when
// a retry may pass, and returns that wait (0: none). Every wire's SDKs read the header.
func RetryAfter(h http.Header, err error) time.Duration {
	var le *llm.Error
	if !errors.As(err, &le) || le.RetryAfter <= 0 {
		return 0
	}
	h.Set("Retry-After", strconv.Itoa(int((le.RetryAfter+time.Second-1)/time.Second)))
	return le.RetryAfter
}

// ContentType is the media type of a's streamed answer to a request of query ("":
// text/event-stream).
func (a *API) ContentType(query func(name string) string) string {
	if a.StreamType == nil {
		return ""
	}
	return a.StreamType(query)
}

// RouteError is the error of a request no route serves (status 404: an unknown path; 405:
// a method the path does not take), in words that name the method and the path.
func RouteError(status int, method, path string) *llm.Error {
	e := &llm.Error{Kind: llm.Invalid, Status: status, Type: "invalid_request_error"}
	switch status {
	case http.StatusNotFound:
		e.Message, e.Code = "Unknown request URL: "+method+" "+path+".", "unknown_url"
	case http.StatusMethodNotAllowed:
		e.Message = "Method " + method + " is not allowed on " + path + "."
	default:
		e.Message = http.StatusText(status)
	}
	return e
}

// Read decodes a request of a model route with the wire's Decode, then keys its
// conversation on every wire alike (llm.Request.KeySession): the X-Sluice-Session header
// first, then what the wire named (issue 46).
func (a *API) Read(body []byte, in Input) (*Decoded, error) {
	d, err := a.Decode(body, in)
	if err == nil && d.Req != nil && in.Header != nil {
		d.Req.KeySession(in.Header(llm.SessionHeader))
	}
	return d, err
}

// ObjectRoutes are the routes of a wire of stored objects (files, batches), all of op
// Object: methodPaths are method and path, in pairs.
func ObjectRoutes(methodPaths ...string) []Route {
	rs := make([]Route, 0, len(methodPaths)/2)
	for i := 0; i+1 < len(methodPaths); i += 2 {
		rs = append(rs, Route{Method: methodPaths[i], Path: methodPaths[i+1], Op: Object})
	}
	return rs
}
