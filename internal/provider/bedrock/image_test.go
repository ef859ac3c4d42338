package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/bedrock/bedrocktest"
)

// painter is an httptest Bedrock Runtime endpoint serving InvokeModel of the image models,
// signed for us-west-2 (checked as Bedrock does): it answers status with body, in which %s
// is the request's session token, and records the paths and bodies it got.
type painter struct {
	mu           sync.Mutex
	status       int
	answer       string
	paths, bodys []string
}

func (p *painter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths, p.bodys = append(p.paths, r.URL.EscapedPath()), append(p.bodys, string(b))
	w.Header().Set("Content-Type", "application/json")
	if err := bedrocktest.VerifySigV4(r, b, rerankCreds, "us-west-2", time.Now()); err != nil || r.Method != "POST" {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":%q}`, fmt.Sprint(err))
		return
	}
	if p.status != 0 {
		w.WriteHeader(p.status)
	}
	io.WriteString(w, strings.ReplaceAll(p.answer, "%s", r.Header.Get("X-Amz-Security-Token")))
}

// A generation is one signed InvokeModel call on the model's path with the TEXT_IMAGE body
// (numberOfImages from n, width and height from size), its images OpenAI's b64_json list.
// Without a size, the model's default size is left to it.
func TestImage(t *testing.T) {
	p := &painter{answer: `{"images":["iVBORw0KGgo=","AAAA"],"error":null}`}
	c := invokeClient(t, p)
	out, err := c.Plain(context.Background(), "images/generations", "amazon.nova-canvas-v1:0",
		[]byte(`{"model":"img","prompt":"a lighthouse","n":2,"size":"1280x720","response_format":"b64_json","quality":"hd"}`))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Created int64
		Data    []map[string]string
	}
	if json.Unmarshal(out, &a) != nil || a.Created == 0 || len(a.Data) != 2 || a.Data[0]["b64_json"] != "iVBORw0KGgo=" || a.Data[1]["b64_json"] != "AAAA" {
		t.Errorf("answer %s", out)
	}
	want := `{"taskType":"TEXT_IMAGE","textToImageParams":{"text":"a lighthouse"},"imageGenerationConfig":{"numberOfImages":2,"width":1280,"height":720}}`
	if len(p.bodys) != 1 || p.bodys[0] != want || p.paths[0] != "/model/amazon.nova-canvas-v1%3A0/invoke" {
		t.Errorf("request %q %q\nwant %s", p.paths, p.bodys, want)
	}
	if _, err := c.Plain(context.Background(), "images/generations", "amazon.titan-image-generator-v2:0", []byte(`{"prompt":"a cat"}`)); err != nil {
		t.Fatal(err)
	}
	if want := `{"taskType":"TEXT_IMAGE","textToImageParams":{"text":"a cat"},"imageGenerationConfig":{"numberOfImages":1}}`; p.bodys[1] != want {
		t.Errorf("request %s, want %s", p.bodys[1], want)
	}
}

// Faults: an upstream failing (500 quoting the session token) is Unavailable with no
// credential in its words; an answer that is not the model's (not JSON, no images, the
// model's error member) is Unavailable, so the chain falls back; response_format url, a
// size that is not WIDTHxHEIGHT and a model that is no image model are Invalid, uncalled.
func TestImageFaults(t *testing.T) {
	for _, tt := range []struct {
		status int
		answer string
	}{{500, `{"message":"internal failure for token %s"}`}, {200, `<html>`}, {200, `{"images":[]}`},
		{200, `{"images":[""]}`}, {200, `{"error":"content filtered"}`}} {
		c := invokeClient(t, &painter{status: tt.status, answer: tt.answer})
		_, err := c.Plain(context.Background(), "images/generations", "amazon.nova-canvas-v1:0", []byte(`{"prompt":"p"}`))
		var e *llm.Error
		if !errorsAs(err, &e) || e.Kind != llm.Unavailable {
			t.Errorf("%d %s: got %v, want Unavailable", tt.status, tt.answer, err)
			continue
		}
		for _, secret := range []string{rerankCreds.SessionToken, rerankCreds.SecretAccessKey} {
			if strings.Contains(e.Error(), secret) {
				t.Errorf("the error shows a credential: %s", e.Error())
			}
		}
	}
	p := &painter{answer: `{"images":["AAAA"]}`}
	c := invokeClient(t, p)
	for _, tt := range [][2]string{{"amazon.nova-canvas-v1:0", `{"prompt":"p","response_format":"url"}`},
		{"amazon.nova-canvas-v1:0", `{"prompt":"p","size":"large"}`}, {"amazon.nova-canvas-v1:0", `{"prompt":"p","size":"0x5"}`},
		{"stability.sd3-large-v1:0", `{"prompt":"p"}`}} {
		_, err := c.Plain(context.Background(), "images/generations", tt[0], []byte(tt[1]))
		var e *llm.Error
		if !errorsAs(err, &e) || e.Kind != llm.Invalid || e.Status != http.StatusBadRequest {
			t.Errorf("%s %s: got %v, want Invalid 400", tt[0], tt[1], err)
		}
	}
	if len(p.bodys) != 0 {
		t.Errorf("refused requests were sent: %q", p.bodys)
	}
}
