package moderations

import "testing"

func TestDecode(t *testing.T) {
	for _, body := range []string{`{"input":"x"}`, `{"input":["a","b"],"model":"m"}`,
		`{"input":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}`} {
		if _, _, err := Decode([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	model, req, _ := Decode([]byte(`{"input":"x"}`))
	if model != DefaultModel || len(req.Extra) != 1 {
		t.Errorf("got %q %+v, want the default model and the input kept", model, req.Extra)
	}
	for _, body := range []string{`{"input":[1]}`, `{"input":[{"type":"text"}]}`, `{"input":{}}`, `{"model":"m"}`,
		`{"input":[{"type":"image_url","image_url":{"url":7}}]}`, `{"input":[{"type":"image_url","image_url":"https://x"}]}`,
		`{"input":[{"type":"image_url","image_url":{}}]}`} {
		if _, _, err := Decode([]byte(body)); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
}
