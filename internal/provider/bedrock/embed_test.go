package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
	"github.com/sluice-gw/sluice/internal/provider/cohere"
)

// invoker is an httptest Bedrock Runtime endpoint serving InvokeModel of the embedding
// models, signed for us-west-2: Titan answers [its text's length] with 2 tokens, Cohere
// [each text's length] by type; with bad set, bad is the answer.
type invoker struct {
	mu     sync.Mutex
	paths  []string
	bodies []string
	bad    string
}

func (v *invoker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paths, v.bodies = append(v.paths, r.URL.EscapedPath()), append(v.bodies, string(b))
	w.Header().Set("Content-Type", "application/json")
	if err := bedrocktest.VerifySigV4(r, b, rerankCreds, "us-west-2", time.Now()); err != nil {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":%q}`, err.Error())
		return
	}
	if v.bad != "" {
		io.WriteString(w, v.bad)
		return
	}
	var req struct {
		InputText string   `json:"inputText"`
		Texts     []string `json:"texts"`
	}
	json.Unmarshal(b, &req)
	if strings.Contains(r.URL.Path, "titan") {
		fmt.Fprintf(w, `{"embedding":[%d],"inputTextTokenCount":2,"embeddingsByType":{"float":[%d]}}`, len(req.InputText), len(req.InputText))
		return
	}
	var vs []string
	for _, t := range req.Texts {
		vs = append(vs, fmt.Sprintf("[%d]", len(t)))
	}
	fmt.Fprintf(w, `{"id":"e-1","response_type":"embeddings_by_type","texts":[],"embeddings":{"float":[%s]}}`, strings.Join(vs, ","))
}

func invokeClient(t *testing.T, v http.Handler) *Client {
	t.Helper()
	srv := httptest.NewServer(v)
	t.Cleanup(srv.Close)
	return New(Config{Name: "br", Region: "us-west-2", BaseURL: srv.URL,
		Credentials: credentials.NewStaticCredentialsProvider(rerankCreds.AccessKeyID, rerankCreds.SecretAccessKey, rerankCreds.SessionToken)})
}

// Titan: one signed InvokeModel call a text on the model's path, {inputText, dimensions};
// the answer OpenAI's list with the tokens summed. Cohere: the texts in calls of 96, with
// input_type (search_document by default) and float vectors.
func TestEmbed(t *testing.T) {
	v := &invoker{}
	c := invokeClient(t, v)
	out, err := c.Plain(context.Background(), "embeddings", "amazon.titan-embed-text-v2:0", []byte(`{"model":"e","input":["hello","goodbye"],"dimensions":256}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[5]},{"object":"embedding","index":1,"embedding":[7]}],` +
		`"model":"amazon.titan-embed-text-v2:0","usage":{"prompt_tokens":4,"total_tokens":4}}`
	if string(out) != want {
		t.Errorf("titan: %s\nwant   %s", out, want)
	}
	if fmt.Sprint(v.paths) != "[/model/amazon.titan-embed-text-v2%3A0/invoke /model/amazon.titan-embed-text-v2%3A0/invoke]" ||
		v.bodies[0] != `{"inputText":"hello","dimensions":256}` {
		t.Errorf("titan requests %q %q", v.paths, v.bodies)
	}

	v.paths, v.bodies = nil, nil
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = fmt.Sprintf("%q", strings.Repeat("x", i+1))
	}
	out, err = c.Plain(context.Background(), "embeddings", "cohere.embed-v4:0", []byte(`{"model":"e","input":[`+strings.Join(texts, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Data []struct {
			Index     int
			Embedding []float32
		}
	}
	json.Unmarshal(out, &l)
	if len(l.Data) != 100 || l.Data[99].Index != 99 || len(l.Data[99].Embedding) != 1 || l.Data[99].Embedding[0] != 100 {
		t.Errorf("cohere: %.300s", out)
	}
	var first cohere.EmbedBody
	json.Unmarshal([]byte(v.bodies[0]), &first)
	if len(v.bodies) != 2 || len(first.Texts) != 96 || first.InputType != "search_document" || fmt.Sprint(first.EmbeddingTypes) != "[float]" ||
		v.paths[0] != "/model/cohere.embed-v4%3A0/invoke" {
		t.Errorf("cohere requests %q %.200q", v.paths, v.bodies)
	}
}

// Faults: answers that are not the model's (not JSON, no vector, fewer vectors than texts)
// are Unavailable; a model that is no embedding model and token ids are Invalid.
func TestEmbedFaults(t *testing.T) {
	for _, tt := range [][2]string{{"amazon.titan-embed-text-v2:0", `<html>`}, {"amazon.titan-embed-text-v1", `{"inputTextTokenCount":2}`},
		{"cohere.embed-english-v3", `{"embeddings":{"float":[[1]]}}`}} {
		c := invokeClient(t, &invoker{bad: tt[1]})
		_, err := c.Plain(context.Background(), "embeddings", tt[0], []byte(`{"model":"e","input":["a","b"]}`))
		var e *llm.Error
		if !errorsAs(err, &e) || e.Kind != llm.Unavailable {
			t.Errorf("%s %s: got %v, want Unavailable", tt[0], tt[1], err)
		}
	}
	c := invokeClient(t, &invoker{})
	for _, tt := range [][2]string{{"anthropic.claude-3-haiku-20240307-v1:0", `{"model":"e","input":"a"}`}, {"cohere.embed-v4:0", `{"model":"e","input":[1,2]}`}} {
		_, err := c.Plain(context.Background(), "embeddings", tt[0], []byte(tt[1]))
		var e *llm.Error
		if !errorsAs(err, &e) || e.Kind != llm.Invalid {
			t.Errorf("%s %s: got %v, want Invalid", tt[0], tt[1], err)
		}
	}
}
