// Package bedrocktest holds what tests of Bedrock calls share: event-stream frames written
// with the AWS SDK's encoder, as Bedrock sends them, and an environment where the AWS
// default credential chain sees nothing and the instance metadata endpoint is a loopback
// server that counts its calls. Tests only.
package bedrocktest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// Frame is one event frame of type typ, its JSON payload padded with "p" as Bedrock pads it.
func Frame(t testing.TB, typ, payload string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	m["p"] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
	b, _ := json.Marshal(m)
	return Encode(t, Message(b, bedrock.HeaderMessageType, bedrock.MessageEvent, bedrock.HeaderEventType, typ,
		bedrock.HeaderContentType, "application/json"))
}

// Exception is an exception frame, as Bedrock sends one inside a 200 stream.
func Exception(t testing.TB, typ, message string) []byte {
	t.Helper()
	b, _ := json.Marshal(bedrock.Exception{Message: message})
	return Encode(t, Message(b, bedrock.HeaderMessageType, bedrock.MessageException, bedrock.HeaderExceptionType, typ,
		bedrock.HeaderContentType, "application/json"))
}

// Message is a frame with payload and the string headers name, value, ...
func Message(payload []byte, kv ...string) eventstream.Message {
	var h eventstream.Headers
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], eventstream.StringValue(kv[i+1]))
	}
	return eventstream.Message{Headers: h, Payload: payload}
}

// Encode writes m with the SDK's encoder (prelude, headers, payload, both CRCs).
func Encode(t testing.TB, m eventstream.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// CleanEnv clears, for the test, every variable the default chain reads, points the shared
// files at dir, and the instance metadata endpoint at a loopback server answering 404; it
// returns the count of that server's calls.
func CleanEnv(t *testing.T, dir string) *atomic.Int32 {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_DISABLED", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	var hits atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(imds.Close)
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	return &hits
}

// EnvCredentials is CleanEnv with creds in the environment, where the default chain finds
// them first.
func EnvCredentials(t *testing.T, creds aws.Credentials) {
	t.Helper()
	CleanEnv(t, t.TempDir())
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", creds.SessionToken)
}

// VerifySigV4 recomputes the signature of r, whose body is body, with the SDK's signer as
// Bedrock checks it: the credential scope (key id, region, service bedrock), a date within
// five minutes of now, the signed headers (host, x-amz-date, the session token,
// content-type) and the body's hash. A mismatch is the error Bedrock would answer with 403.
func VerifySigV4(r *http.Request, body []byte, creds aws.Credentials, region string, now time.Time) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return fmt.Errorf("not a SigV4 Authorization header")
	}
	var scope, signed string
	for _, kv := range strings.Split(rest, ", ") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "Credential":
			scope = v
		case "SignedHeaders":
			signed = v
		}
	}
	parts := strings.Split(scope, "/")
	if len(parts) != 5 || parts[0] != creds.AccessKeyID || parts[2] != region || parts[3] != "bedrock" || parts[4] != "aws4_request" {
		return fmt.Errorf("credential scope %q, want %s/<date>/%s/bedrock/aws4_request", scope, creds.AccessKeyID, region)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	if d := now.Sub(at); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("Signature expired: the request's date is %v from the server's", d)
	}
	hs := strings.Split(signed, ";")
	for _, want := range []string{"host", "x-amz-date", "x-amz-security-token", "content-type"} {
		if !strings.Contains(";"+signed+";", ";"+want+";") {
			return fmt.Errorf("header %s not signed (%s)", want, signed)
		}
	}
	re, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.EscapedPath(), bytes.NewReader(body))
	re.URL.RawQuery = r.URL.RawQuery
	for _, h := range hs {
		switch h {
		case "host":
		case "content-length":
			re.ContentLength = r.ContentLength
		default:
			for _, v := range r.Header.Values(h) {
				re.Header.Add(h, v)
			}
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, re, hex.EncodeToString(sum[:]), "bedrock", region, at); err != nil {
		return err
	}
	if got := re.Header.Get("Authorization"); got != auth {
		return fmt.Errorf("The request signature we calculated does not match the signature you provided")
	}
	return nil
}
