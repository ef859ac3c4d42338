package bedrock

import (
	"fmt"
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

// The test credentials: the secret must never show in an error.
const (
	testRegion = "us-east-1"
	testAKID   = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYSECRETKEY"
	testToken  = "SESSIONTOKEN-SECRET"
	testModel  = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
)

var testCreds = aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: testToken}

// upstream is an httptest Bedrock Runtime: it checks each call's SigV4 signature by
// recomputing it with the SDK's signer (region, service, date within 5 minutes, signed
// headers, body hash), answers 403 InvalidSignatureException as Bedrock does when it does
// not match, and otherwise runs the test's handler.
type upstream struct {
	*providertest.Upstream
	region string
	now    func() time.Time
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{region: testRegion, now: time.Now}
	u.Upstream = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _, _ := u.Last()
		if err := bedrocktest.VerifySigV4(r, body, testCreds, u.region, u.now()); err != nil {
			w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"message":%q}`, err.Error())
			return
		}
		h(w, r)
	})
	return u
}

// client is a Client of u signing with the test credentials.
func (u *upstream) client(c Config) *Client {
	c.BaseURL, c.Region = u.URL, testRegion
	if c.Credentials == nil && c.APIKey == "" {
		c.Credentials = credentials.StaticCredentialsProvider{Value: testCreds}
	}
	return New(c)
}

var (
	frame          = bedrocktest.Frame
	exceptionFrame = bedrocktest.Exception
	encode         = bedrocktest.Encode
)

// The frames of a short answer.
func textAnswer(t testing.TB) [][]byte {
	return [][]byte{
		frame(t, "messageStart", `{"role":"assistant"}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hello"}}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":" there"}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":0}`),
		frame(t, "messageStop", `{"stopReason":"end_turn"}`),
		frame(t, "metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":120}}`),
	}
}

// frames answers 200 with the frames as an event stream, flushing after each one.
func frames(fs ...[]byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Requestid", "req-123")
		w.WriteHeader(http.StatusOK)
		for _, f := range fs {
			w.Write(f)
			w.(http.Flusher).Flush()
		}
	}
}

func testRequest() *llm.Request {
	return &llm.Request{Model: testModel, Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}, Plain: true}}}
}

func wantKind(t *testing.T, err error, k llm.Kind) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errorsAs(err, &le) || le.Kind != k {
		t.Fatalf("got %v (kind %v), want kind %v", err, llm.KindOf(err), k)
	}
	if s := err.Error(); strings.Contains(s, testSecret) || strings.Contains(s, testToken) {
		t.Fatalf("error %q holds a credential", s)
	}
	return le
}
