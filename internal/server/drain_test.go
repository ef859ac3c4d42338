package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDrainFailsReadiness: after Drain, /readyz answers 503 so load balancers stop sending
// new requests, while requests still reaching the process are served.
func TestDrainFailsReadiness(t *testing.T) {
	t.Setenv("SLUICE_REPLICA", "replica-7")
	srv := buildConfig(t, baseConfig, map[string]string{"MOCK_URL": "http://127.0.0.1:1"}, io.Discard)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	g := hs.URL
	resp, err := http.Get(g + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Sluice-Replica") != "replica-7" {
		t.Fatalf("before Drain: %d replica %q, want 200 from replica-7", resp.StatusCode, resp.Header.Get("X-Sluice-Replica"))
	}
	srv.Drain()
	for _, path := range []string{"/readyz", "/healthz", "/v1/models"} {
		resp, err := http.Get(g + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := 200
		if path == "/readyz" {
			want = 503
		}
		if resp.StatusCode != want {
			t.Errorf("after Drain, %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
