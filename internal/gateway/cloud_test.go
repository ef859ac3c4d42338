package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
	"github.com/sluice-gw/sluice/internal/server"
)

// serve builds the gateway yaml describes (${VAR} from vars only) and serves it on
// loopback; the log goes to log.
func serve(t testing.TB, yaml string, vars map[string]string, log io.Writer) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(build(t, yaml, vars, log))
	t.Cleanup(s.Close)
	return s
}

// build is the gateway yaml describes (${VAR} from vars only), closed when the test ends;
// the log goes to log.
func build(t testing.TB, yaml string, vars map[string]string, log io.Writer) *server.Server {
	t.Helper()
	cfg, err := config.ParseWith([]byte(yaml), "test.yaml", func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gateway.New(cfg, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// chat posts a streamed chat request for model and returns the served target, the text of
// the answer and the names of the events (error frames included).
func chat(t *testing.T, url, model string) (target, text string, frames []string) {
	t.Helper()
	body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"Hello there, gateway."}]}`
	res, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Error   json.RawMessage `json:"error"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		json.Unmarshal([]byte(data), &c)
		if c.Error != nil {
			frames = append(frames, "error")
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
		}
	}
	return res.Header.Get("X-Sluice-Target"), text, frames
}

// bedrockUpstream answers every ConverseStream call with messageStart, then a
// throttlingException frame: a rate limit inside the 200 stream, before any content.
func bedrockUpstream(t *testing.T, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	body := append(bedrocktest.Frame(t, "messageStart", `{"role":"assistant"}`),
		bedrocktest.Exception(t, "throttlingException", "Too many tokens, please wait before trying again.")...)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if !strings.HasPrefix(r.URL.Path, "/model/") || !strings.HasSuffix(r.URL.Path, "/converse-stream") ||
			r.Header.Get("Authorization") != "Bearer br-test-key" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestBedrockFallsBackToAnthropic: a throttlingException inside Bedrock's 200 stream, before
// any content, falls back to the next target of another kind (Anthropic, through the mock),
// and the client gets one clean stream from it, with no trace of the first attempt.
func TestBedrockFallsBackToAnthropic(t *testing.T) {
	var calls atomic.Int32
	br := bedrockUpstream(t, &calls)
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	g := serve(t, `
providers:
  br:   {kind: bedrock, region: us-east-1, base_url: "${BR_URL}", api_key: br-test-key}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-test}
models:
  pair: [br/us.anthropic.claude-sonnet-4-5-20250929-v1:0, anth/echo]
`, map[string]string{"BR_URL": br.URL, "MOCK_URL": ms.URL}, io.Discard)
	target, text, frames := chat(t, g.URL, "pair")
	if target != "anth/echo" || text != "Hello there, gateway." || len(frames) != 0 || calls.Load() != 1 || mock.Calls("echo") != 1 {
		t.Errorf("got target %q text %q frames %v, bedrock calls %d, anthropic calls %d; want anth/echo's echo, no error, one call each",
			target, text, frames, calls.Load(), mock.Calls("echo"))
	}
}

// TestBedrockWithoutCredentials: with no AWS credential source, the bedrock provider is left
// out of every chain with a warning, nothing is called at start (the instance metadata
// endpoint, on loopback here, counts its calls), and its aliases are served by what is left.
func TestBedrockWithoutCredentials(t *testing.T) {
	imdsCalls := bedrocktest.CleanEnv(t, t.TempDir())

	const yaml = `
providers:
  br:  {kind: bedrock, region: eu-west-3, imds: ${IMDS}}
  sim: {kind: sim}
models:
  default: [br/amazon.nova-pro-v1:0, sim/echo]
`
	var log bytes.Buffer
	g := serve(t, strings.Replace(yaml, "${IMDS}", "false", 1), nil, &log)
	if !strings.Contains(log.String(), "provider left out of every chain: no credentials") || !strings.Contains(log.String(), "provider=br") {
		t.Errorf("log %q: want the warning naming br", log.String())
	}
	if target, text, _ := chat(t, g.URL, "default"); target != "sim/echo" || text != "Hello there, gateway." {
		t.Errorf("got %q %q, want sim/echo's echo", target, text)
	}
	// With imds: true the provider is kept, and still nothing is called at start; its first
	// call asks the metadata service, whose refusal is the target's failure: sim serves.
	g = serve(t, strings.Replace(yaml, "${IMDS}", "true", 1), nil, io.Discard)
	if n := imdsCalls.Load(); n != 0 {
		t.Fatalf("start called the metadata service %d times, want none", n)
	}
	if target, _, _ := chat(t, g.URL, "default"); target != "sim/echo" || imdsCalls.Load() == 0 {
		t.Errorf("got target %q after %d metadata calls, want sim/echo after asking it", target, imdsCalls.Load())
	}
}

// TestGeminiFallsBackToOpenAI: a RESOURCE_EXHAUSTED error event inside the Gemini API's 200
// stream, before any content, falls back to an OpenAI-compatible target (the mock): one
// clean stream for the client.
func TestGeminiFallsBackToOpenAI(t *testing.T) {
	var calls atomic.Int32
	gm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("X-Goog-Api-Key") != "AIza-test" || !strings.HasSuffix(r.URL.Path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`+"\r\n\r\n")
	}))
	t.Cleanup(gm.Close)
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	g := serve(t, `
providers:
  gem: {kind: gemini, base_url: "${GEM_URL}/v1beta", api_key: AIza-test}
  oai: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  pair: [gem/gemini-2.5-flash, oai/echo]
`, map[string]string{"GEM_URL": gm.URL, "MOCK_URL": ms.URL}, io.Discard)
	target, text, frames := chat(t, g.URL, "pair")
	if target != "oai/echo" || text != "Hello there, gateway." || len(frames) != 0 || calls.Load() != 1 || mock.Calls("echo") != 1 {
		t.Errorf("got target %q text %q frames %v, gemini calls %d, openai calls %d", target, text, frames, calls.Load(), mock.Calls("echo"))
	}
}

// TestVertexWithoutCredentials: with no Google credentials visible, the vertex provider is
// left out with a warning and its alias is served by what is left.
func TestVertexWithoutCredentials(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("CLOUDSDK_CONFIG", dir)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	var log bytes.Buffer
	g := serve(t, `
providers:
  vx:  {kind: vertex, project: proj, location: global}
  sim: {kind: sim}
models:
  default: [vx/gemini-2.5-flash, sim/echo]
`, nil, &log)
	if !strings.Contains(log.String(), "provider left out of every chain: no credentials") || !strings.Contains(log.String(), "provider=vx") {
		t.Errorf("log %q: want the warning naming vx", log.String())
	}
	if target, _, _ := chat(t, g.URL, "default"); target != "sim/echo" {
		t.Errorf("got %q, want sim/echo", target)
	}
}

// TestAzureContentFilter: Azure's 400 content_filter reaches the client as a 400 with that
// code, and the chain does not route the prompt around the filter; a 429 from Azure falls
// back as any rate limit does.
func TestAzureContentFilter(t *testing.T) {
	az := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Api-Key") != "az-key" || r.URL.Path != "/openai/v1/chat/completions" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(b), `"model":"busy"`) {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"code":"429","message":"Requests have exceeded call rate limit."}}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}`)
	}))
	t.Cleanup(az.Close)
	g := serve(t, `
providers:
  az:  {kind: azure, base_url: "${AZ_URL}", api_key: az-key}
  sim: {kind: sim}
models:
  filtered: [az/gpt-4o, sim/echo]
  busy: [az/busy, sim/echo]
`, map[string]string{"AZ_URL": az.URL}, io.Discard)
	res, err := http.Post(g.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"filtered","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(b), `"code":"content_filter"`) {
		t.Errorf("got %d %s, want 400 content_filter", res.StatusCode, b)
	}
	if target, text, _ := chat(t, g.URL, "busy"); target != "sim/echo" || text != "Hello there, gateway." {
		t.Errorf("busy: got %q %q, want sim/echo", target, text)
	}
}

// TestBedrockSignedFromEnvironment: with AWS credentials in the environment and no api_key,
// the gateway signs its calls with them (the upstream recomputes the SigV4 signature for the
// configured region) and streams the answer to the client.
func TestBedrockSignedFromEnvironment(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDGATEWAYTEST", SecretAccessKey: "gateway-test-SECRET", SessionToken: "gateway-session"}
	bedrocktest.EnvCredentials(t, creds)
	answer := bytes.Join([][]byte{
		bedrocktest.Frame(t, "messageStart", `{"role":"assistant"}`),
		bedrocktest.Frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Signed "}}`),
		bedrocktest.Frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"and streamed."}}`),
		bedrocktest.Frame(t, "messageStop", `{"stopReason":"end_turn"}`),
		bedrocktest.Frame(t, "metadata", `{"usage":{"inputTokens":5,"outputTokens":4,"totalTokens":9}}`),
	}, nil)
	var verr atomic.Value
	br := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := bedrocktest.VerifySigV4(r, body, creds, "eu-central-1", time.Now()); err != nil {
			verr.Store(err.Error())
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Write(answer)
	}))
	t.Cleanup(br.Close)
	g := serve(t, `
providers:
  br: {kind: bedrock, region: eu-central-1, base_url: "${BR_URL}"}
models:
  d: [br/eu.anthropic.claude-sonnet-4-5-20250929-v1:0]
`, map[string]string{"BR_URL": br.URL}, io.Discard)
	target, text, frames := chat(t, g.URL, "d")
	if target != "br/eu.anthropic.claude-sonnet-4-5-20250929-v1:0" || text != "Signed and streamed." || len(frames) != 0 {
		t.Errorf("got %q %q %v (signature check: %v)", target, text, frames, verr.Load())
	}
}
