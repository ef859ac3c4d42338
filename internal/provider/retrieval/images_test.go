package retrieval_test

import (
	"encoding/json"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// ReadImage: n (1 unset), size as width and height ("auto" and none: 0), and the refusals:
// response_format url, a size that is not WIDTHxHEIGHT. Images: OpenAI's b64_json list,
// none or an empty one an error.
func TestReadImage(t *testing.T) {
	m, err := retrieval.ReadImage([]byte(`{"prompt":"p","n":3,"size":"1792x1024","response_format":"b64_json"}`), "X")
	if err != nil || m.Prompt != "p" || m.Count() != 3 || m.Width != 1792 || m.Height != 1024 {
		t.Errorf("got %+v %v", m, err)
	}
	for _, body := range []string{`{"prompt":"p"}`, `{"prompt":"p","size":"auto"}`} {
		if m, err := retrieval.ReadImage([]byte(body), "X"); err != nil || m.Count() != 1 || m.Width != 0 || m.Height != 0 {
			t.Errorf("%s: got %+v %v", body, m, err)
		}
	}
	for _, body := range []string{`{"prompt":"p","response_format":"url"}`, `{"prompt":"p","size":"1024"}`,
		`{"prompt":"p","size":"-1x5"}`, `{"prompt":"p","size":"ax1"}`, `[]`} {
		if _, err := retrieval.ReadImage([]byte(body), "X"); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
	out, err := retrieval.Images([]string{"AAAA", "BBBB"})
	var a struct {
		Created int64
		Data    []map[string]string
	}
	if err != nil || json.Unmarshal(out, &a) != nil || a.Created == 0 || len(a.Data) != 2 || a.Data[1]["b64_json"] != "BBBB" {
		t.Errorf("Images: %s %v", out, err)
	}
	for _, b := range [][]string{nil, {"AAAA", ""}} {
		if _, err := retrieval.Images(b); err == nil {
			t.Errorf("Images(%q): no error", b)
		}
	}
}

// FuzzReadImage: any body is read or refused, never a panic; a size read is positive.
func FuzzReadImage(f *testing.F) {
	f.Add(`{"prompt":"p","n":2,"size":"1024x1024"}`)
	f.Add(`{"prompt":"p","size":"x"}`)
	f.Add(`{"size":"99999999999999999999x1"}`)
	f.Fuzz(func(t *testing.T, body string) {
		m, err := retrieval.ReadImage([]byte(body), "X")
		if err == nil && (m.Width < 0 || m.Height < 0 || (m.Width == 0) != (m.Height == 0)) {
			t.Errorf("%s: size %dx%d", body, m.Width, m.Height)
		}
	})
}
