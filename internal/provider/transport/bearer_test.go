package transport

import "testing"

func TestMaskBearer(t *testing.T) {
	tests := map[string]string{
		"no token here":                         "no token here",
		"header Authorization: Bearer ya29.abc": "header Authorization: Bearer [MASKED]",
		`{"h":"Bearer eyJ.x.y","k":"Bearer z"}`: `{"h":"Bearer [MASKED]","k":"Bearer [MASKED]"}`,
		"Bearer ":                               "Bearer [MASKED]",
	}
	for in, want := range tests {
		if got := MaskBearer(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
