package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gateway is a real gateway in front of a real mock upstream, both over loopback HTTP.
type gateway struct {
	url  string
	mock *mockllm.Server
}

const baseConfig = `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  default: [mock/echo]
`

func newGateway(t *testing.T, yaml string) *gateway {
	t.Helper()
	mock := mockllm.New(mockllm.Options{FixturesDir: "../provider/openai/testdata"})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	if yaml == "" {
		yaml = baseConfig
	}
	gs := serveConfig(t, yaml, map[string]string{"MOCK_URL": ms.URL})
	t.Cleanup(gs.Close)
	return &gateway{url: gs.URL, mock: mock}
}

// serveConfig serves a gateway built from yaml, with ${VAR} taken from vars only, over
// loopback. The caller closes it (before the upstreams it uses, so handlers end first).
func serveConfig(t *testing.T, yaml string, vars map[string]string) *httptest.Server {
	t.Helper()
	return listen(buildConfig(t, yaml, vars, io.Discard))
}

// listen serves h over loopback as the gateway binary does: with server.ConnContext, so that
// a half-closed connection is not a client that left.
func listen(h http.Handler) *httptest.Server {
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ConnContext = server.ConnContext
	hs.Start()
	return hs
}

// buildConfig builds the gateway yaml describes, with ${VAR} taken from vars only and its log
// written to log.
func buildConfig(t *testing.T, yaml string, vars map[string]string, log io.Writer) *server.Server {
	t.Helper()
	cfg, err := config.ParseWith([]byte(yaml), "test.yaml", func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gw.New(cfg, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// post sends a chat request with a fixed request id, so bodies are deterministic.
func (g *gateway) post(t *testing.T, body string) *http.Response {
	t.Helper()
	return postTo(t, g.url, "/v1/chat/completions", body)
}

func chatBody(model string, stream bool, extra string) string {
	b, _ := json.Marshal(model)
	s := `{"model":` + string(b) + `,"messages":[{"role":"user","content":"Hello there, gateway."}]`
	if stream {
		s += `,"stream":true`
	}
	return s + extra + "}"
}

// frames reads a whole SSE body into its data payloads.
func frames(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		} else if line != "" && !strings.HasPrefix(line, ":") {
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string          `json:"role"`
			Content          *string         `json:"content"`
			Refusal          *string         `json:"refusal"`
			Reasoning        *string         `json:"reasoning"`
			ReasoningContent *string         `json:"reasoning_content"`
			ToolCalls        []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parsed is a streamed answer as a client assembles it.
type parsed struct {
	chunks    []chunk
	text      map[int]string
	reasoning map[int]string
	refusal   map[int]string
	calls     map[int][]toolCallDelta
	finish    map[int]string
	roles     map[int]int
	done      bool
	err       *chunk
	usage     *chunk
}

func parse(t *testing.T, fs []string) *parsed {
	t.Helper()
	p := &parsed{text: map[int]string{}, reasoning: map[int]string{}, refusal: map[int]string{},
		calls: map[int][]toolCallDelta{}, finish: map[int]string{}, roles: map[int]int{}}
	for i, f := range fs {
		if p.done || p.err != nil {
			t.Fatalf("frame %d after the end: %s", i, f)
		}
		if f == "[DONE]" {
			p.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(f), &c); err != nil {
			t.Fatalf("frame %d is not JSON: %s", i, f)
		}
		if c.Error != nil {
			p.err = &c
			continue
		}
		if c.Object != "chat.completion.chunk" || c.ID != "chatcmpl-test" {
			t.Errorf("frame %d: got object %q id %q, want chat.completion.chunk chatcmpl-test", i, c.Object, c.ID)
		}
		if c.Usage != nil && len(c.Choices) == 0 {
			p.usage = &c
		}
		for _, ch := range c.Choices {
			d := ch.Delta
			if d.Role != "" {
				p.roles[ch.Index]++
			}
			if d.Content != nil {
				p.text[ch.Index] += *d.Content
			}
			if d.Refusal != nil {
				p.refusal[ch.Index] += *d.Refusal
			}
			if d.Reasoning != nil {
				p.reasoning[ch.Index] += *d.Reasoning
			}
			if d.ReasoningContent != nil {
				p.reasoning[ch.Index] += *d.ReasoningContent
			}
			p.calls[ch.Index] = append(p.calls[ch.Index], d.ToolCalls...)
			if ch.FinishReason != nil {
				p.finish[ch.Index] = *ch.FinishReason
			}
		}
		p.chunks = append(p.chunks, c)
	}
	return p
}

var createdRE = regexp.MustCompile(`"created":\d+`)

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = createdRE.ReplaceAll(got, []byte(`"created":0`))
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func ctxWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, cancel
}
