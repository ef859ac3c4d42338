package bedrock

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name, errType, body string
		status              int
		header              map[string]string
		kind                llm.Kind
		typ, message        string
		retryAfter          time.Duration
	}{
		{name: "400 validation", status: 400, errType: "ValidationException", kind: llm.Invalid, typ: "ValidationException",
			body: `{"message":"The model returned the following errors: max_tokens: 100000 > 64000"}`, message: "The model returned the following errors: max_tokens: 100000 > 64000"},
		{name: "400 quoting the session token", status: 400, errType: "ValidationException", kind: llm.Invalid, typ: "ValidationException",
			body: `{"message":"bad header x-amz-security-token: ` + testToken + `"}`, message: "bad header x-amz-security-token: [MASKED]"},
		{name: "404 model", status: 404, errType: "ResourceNotFoundException", kind: llm.Invalid, typ: "ResourceNotFoundException",
			body: `{"message":"Model not found."}`, message: "Model not found."},
		{name: "403 access denied", status: 403, errType: "AccessDeniedException", kind: llm.Auth, typ: "AccessDeniedException",
			body: `{"message":"User: arn:aws:iam::123:user/x is not authorized; key ` + testAKID + `"}`},
		{name: "429 throttling", status: 429, errType: "ThrottlingException", kind: llm.RateLimited, typ: "ThrottlingException",
			header: map[string]string{"Retry-After": "3"}, body: `{"message":"Too many requests, please wait before trying again."}`, retryAfter: 3 * time.Second},
		{name: "429 model not ready", status: 429, errType: "ModelNotReadyException", kind: llm.Unavailable, typ: "ModelNotReadyException", body: `{"message":"not ready"}`},
		{name: "424 model error", status: 424, errType: "ModelErrorException", kind: llm.Unavailable, typ: "ModelErrorException", body: `{"message":"The model failed"}`},
		{name: "408 model timeout", status: 408, errType: "ModelTimeoutException", kind: llm.Unavailable, typ: "ModelTimeoutException", body: `{"message":"timeout"}`},
		{name: "500 __type only", status: 500, kind: llm.Unavailable, typ: "InternalServerException",
			body: `{"__type":"com.amazon.bedrock#InternalServerException","message":"boom"}`, message: "bedrock answered HTTP 500 InternalServerException: boom"},
		{name: "503 html", status: 503, kind: llm.Unavailable, body: "<html>down</html>", message: "bedrock answered HTTP 503 : Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.errType != "" {
					w.Header().Set("X-Amzn-Errortype", tt.errType+":http://internal.amazon.com/coral/com.amazon.bedrock/")
				}
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			s, err := u.client(Config{Scrub: providertest.Scrub(testAKID)}).Stream(context.Background(), testRequest())
			if s != nil {
				s.Close()
				t.Fatal("got a stream, want an error")
			}
			le := wantKind(t, err, tt.kind)
			if le.Status != tt.status || le.Type != tt.typ || le.RetryAfter != tt.retryAfter {
				t.Errorf("got status %d type %q retry after %v, want %d %q %v", le.Status, le.Type, le.RetryAfter, tt.status, tt.typ, tt.retryAfter)
			}
			if tt.message != "" && le.Message != tt.message {
				t.Errorf("message: got %q, want %q", le.Message, tt.message)
			}
			if tt.kind == llm.Auth && (strings.Contains(le.Message, "arn:aws") || !strings.Contains(le.Message, "refused the gateway's credentials")) {
				t.Errorf("auth message %q: want ours, not the upstream's", le.Message)
			}
		})
	}
}

// TestSigV4 runs the upstream's server-side check of the signature: the right signature
// passes, and a wrong region, a clock off by ten minutes or a missing session token are
// refused (403 InvalidSignatureException, which is Auth).
func TestSigV4(t *testing.T) {
	noToken := aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret}
	tests := []struct {
		name   string
		region string
		creds  aws.CredentialsProvider
		skew   time.Duration
		want   llm.Kind
	}{
		{name: "signed", want: llm.KindNone},
		{name: "wrong region", region: "eu-west-1", want: llm.Auth},
		{name: "clock skew", skew: -10 * time.Minute, want: llm.Auth},
		{name: "no session token", creds: credentials.StaticCredentialsProvider{Value: noToken}, want: llm.Auth},
		{name: "wrong secret", creds: credentials.StaticCredentialsProvider{Value: aws.Credentials{AccessKeyID: testAKID,
			SecretAccessKey: "other", SessionToken: testToken}}, want: llm.Auth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, frames(textAnswer(t)...))
			c := Config{Credentials: tt.creds, Now: func() time.Time { return time.Now().Add(tt.skew) }}
			cl := u.client(c)
			if tt.region != "" {
				cl.region = tt.region
			}
			s, err := cl.Stream(context.Background(), testRequest())
			if tt.want == llm.KindNone {
				if err != nil {
					t.Fatalf("got %v, want the call signed", err)
				}
				defer s.Close()
				evs, end := providertest.Drain(t, s)
				if end != io.EOF || providertest.Assemble(evs).Choices[0].Text != "Hello there" {
					t.Fatalf("got %v, %v", evs, end)
				}
				_, h, url := u.Last()
				if !strings.HasPrefix(url, "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream") || h.Get("X-Amz-Security-Token") != testToken {
					t.Errorf("got url %s, token %q", url, h.Get("X-Amz-Security-Token"))
				}
				return
			}
			wantKind(t, err, tt.want)
		})
	}
}

func TestBearerAPIKey(t *testing.T) {
	const key = "ABSKQmVkcm9ja0FQSUtleS1TRUNSRVQ="
	u := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get("X-Amz-Date") != "" {
			w.Header().Set("X-Amzn-Errortype", "UnrecognizedClientException")
			w.WriteHeader(403)
			io.WriteString(w, `{"message":"bad key `+key+`"}`)
			return
		}
		frames(textAnswer(t)...)(w, r)
	})
	s, err := New(Config{BaseURL: u.URL, Region: testRegion, APIKey: key}).Stream(context.Background(), testRequest())
	if err != nil {
		t.Fatalf("got %v, want the bearer key accepted", err)
	}
	evs, end := providertest.Drain(t, s)
	s.Close()
	if end != io.EOF || len(evs) == 0 {
		t.Fatalf("got %v, %v", evs, end)
	}
	_, err = New(Config{BaseURL: u.URL, Region: testRegion, APIKey: "wrong"}).Stream(context.Background(), testRequest())
	if le := wantKind(t, err, llm.Auth); strings.Contains(le.Error(), key) {
		t.Errorf("error %q quotes the key", le)
	}
}

// TestCredentialsFail: a credential source that fails is the target's Auth failure, and
// nothing is sent.
func TestCredentialsFail(t *testing.T) {
	u := newUpstream(t, frames(textAnswer(t)...))
	fail := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, io.ErrUnexpectedEOF
	})
	_, err := u.client(Config{Credentials: fail}).Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Auth)
	if body, _, _ := u.Last(); body != nil {
		t.Errorf("the upstream got a call")
	}
}

// TestStreamFaults is the fault matrix inside a 200 stream: what the stream yields before
// it fails, and the kind it fails with (which decides the fallback before commit).
func TestStreamFaults(t *testing.T) {
	start := func(t testing.TB) []byte { return frame(t, "messageStart", `{"role":"assistant"}`) }
	text := func(t testing.TB) []byte {
		return frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`)
	}
	stop := func(t testing.TB) []byte { return frame(t, "messageStop", `{"stopReason":"end_turn"}`) }
	tests := []struct {
		name    string
		frames  func(t testing.TB) [][]byte
		healthy bool // a healthy event came before the end
		kind    llm.Kind
		typ     string
	}{
		{name: "throttling before content", kind: llm.RateLimited, typ: "throttlingException", frames: func(t testing.TB) [][]byte {
			return [][]byte{start(t), exceptionFrame(t, "throttlingException", "Too many tokens, please wait before trying again.")}
		}},
		{name: "service unavailable before content", kind: llm.Unavailable, typ: "serviceUnavailableException", frames: func(t testing.TB) [][]byte {
			return [][]byte{start(t), exceptionFrame(t, "serviceUnavailableException", "Bedrock is unable to process your request.")}
		}},
		{name: "validation inside the stream", kind: llm.Unavailable, typ: "validationException", frames: func(t testing.TB) [][]byte {
			return [][]byte{exceptionFrame(t, "validationException", "Input is too long for requested model.")}
		}},
		{name: "internal error after text", healthy: true, kind: llm.Unavailable, typ: "internalServerException", frames: func(t testing.TB) [][]byte {
			return [][]byte{start(t), text(t), exceptionFrame(t, "internalServerException", "An internal server error occurred.")}
		}},
		{name: "cut mid-frame before content", kind: llm.Truncated, frames: func(t testing.TB) [][]byte {
			f := text(t)
			return [][]byte{start(t), f[:len(f)/2]}
		}},
		{name: "cut mid-frame after text", healthy: true, kind: llm.Truncated, frames: func(t testing.TB) [][]byte {
			f := stop(t)
			return [][]byte{start(t), text(t), f[:len(f)-3]}
		}},
		{name: "cut inside the payload", healthy: true, kind: llm.Truncated, frames: func(t testing.TB) [][]byte {
			// The SDK's decoder reads a short payload without error, then io.EOF at its CRC:
			// a metadata frame cut after messageStop must not look like a clean end.
			f := textAnswer(t)[5]
			return [][]byte{start(t), text(t), stop(t), f[:len(f)-10]}
		}},
		{name: "cut before the message CRC", healthy: true, kind: llm.Truncated, frames: func(t testing.TB) [][]byte {
			f := textAnswer(t)[5]
			return [][]byte{start(t), text(t), stop(t), f[:len(f)-4]}
		}},
		{name: "cut inside the prelude", healthy: true, kind: llm.Truncated, frames: func(t testing.TB) [][]byte {
			return [][]byte{start(t), text(t), stop(t)[:5]}
		}},
		{name: "ends before messageStop", healthy: true, kind: llm.Truncated, frames: func(t testing.TB) [][]byte {
			return [][]byte{start(t), text(t)}
		}},
		{name: "bad checksum", kind: llm.Unavailable, frames: func(t testing.TB) [][]byte {
			f := text(t)
			f[len(f)-1] ^= 0xff
			return [][]byte{start(t), f}
		}},
		{name: "error message frame", kind: llm.Unavailable, typ: "InternalFailure", frames: func(t testing.TB) [][]byte {
			return [][]byte{encode(t, bedrocktest.Message(nil, ":message-type", "error", ":error-code", "InternalFailure", ":error-message", "failed"))}
		}},
		{name: "payload not JSON", kind: llm.Unavailable, frames: func(t testing.TB) [][]byte {
			return [][]byte{encode(t, bedrocktest.Message([]byte("{oops"), ":message-type", "event", ":event-type", "contentBlockDelta"))}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, frames(tt.frames(t)...))
			s, err := u.client(Config{}).Stream(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := providertest.Drain(t, s)
			healthy := false
			for _, e := range evs {
				healthy = healthy || e.Healthy()
			}
			if healthy != tt.healthy {
				t.Errorf("healthy events: got %v, want %v (%v)", healthy, tt.healthy, evs)
			}
			if le := wantKind(t, end, tt.kind); le.Type != tt.typ {
				t.Errorf("type: got %q, want %q", le.Type, tt.typ)
			}
		})
	}
}

// TestCompleteWithoutMetadata: messageStop then a clean end is a complete answer whose usage
// the gateway estimates.
func TestCompleteWithoutMetadata(t *testing.T) {
	u := newUpstream(t, frames(textAnswer(t)[:5]...))
	s, err := u.client(Config{}).Stream(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	r := providertest.Assemble(evs)
	if end != io.EOF || r.Choices[0].Finish != "stop" || r.Usage != (llm.Usage{}) {
		t.Errorf("got %+v usage %+v, %v; want a finish, no usage, io.EOF", r.Choices, r.Usage, end)
	}
}

// TestStall: an upstream that stops sending after its first event holds Recv until the
// attempt's context ends; the error is the context's cause (the chain's idle timeout).
func TestStall(t *testing.T) {
	release := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		frames(frame(t, "messageStart", `{"role":"assistant"}`))(w, r)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancelCause(context.Background())
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Recv(); err != nil || ev.Type != llm.EvStart {
		t.Fatalf("first Recv: %v, %v", ev, err)
	}
	idle := &llm.Error{Kind: llm.Timeout, Message: "idle timeout"}
	s.(llm.Waiter).BeforeWait(func() { cancel(idle) }) // the gateway's timer fires as Recv waits
	if _, err := s.Recv(); err != idle {
		t.Fatalf("got %v, want the idle timeout", err)
	}
}

// TestUntranslatableSendsNothing: n > 1 is refused before any call.
func TestUntranslatableSendsNothing(t *testing.T) {
	u := newUpstream(t, frames(textAnswer(t)...))
	r := testRequest()
	r.N = 2
	_, err := u.client(Config{}).Stream(context.Background(), r)
	if le := wantKind(t, err, llm.Unsupported); le.Status != 400 {
		t.Errorf("status %d, want 400", le.Status)
	}
	if body, _, _ := u.Last(); body != nil {
		t.Errorf("the upstream got %s", body)
	}
}
