package server_test

import (
	"runtime"
	"testing"
	"time"
)

// TestOpenAPITelemetry checks /metrics, /admin/stats and the telemetry headers of an answer
// against the document.
func TestOpenAPITelemetry(t *testing.T) {
	var log logBuffer
	url, key, _ := observedFlow(t, &log, "", nil)
	off := serveGate(t, simConfig, nil, time.Hour, nil) // no Prometheus handler: 404
	call := func(base, method, path, token, body string, status int) *exchange {
		t.Helper()
		return newSpecCheck(t, &gateway{url: base}).call(t, method, path, token, body, status,
			"Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	}
	chat := call(url, "POST", "/v1/chat/completions", key, chatBody("default", false, ""), 200)
	if chat.resp.Header.Get("X-Sluice-Overhead-Ms") == "" || chat.resp.Header.Get("Traceresponse") == "" {
		t.Errorf("got headers %v, want X-Sluice-Overhead-Ms and Traceresponse", chat.resp.Header)
	}
	call(url, "POST", "/v1/chat/completions", key, chatBody("default", true, ""), 200)
	call(url, "GET", "/metrics", "", "", 200)
	call(off, "GET", "/metrics", "", "", 404)
	call(url, "GET", "/admin/stats", adminToken, "", 200)
	call(url, "GET", "/admin/stats?minutes=5", adminToken, "", 200)
	call(url, "GET", "/admin/stats?minutes=100000", adminToken, "", 400)
	call(url, "GET", "/admin/stats", "", "", 401)
	// The build (a test binary has no VCS information: unknown, and its Go version).
	var b struct{ Object, Version, Commit, Go string }
	decode(t, call(url, "GET", "/admin/version", adminToken, "", 200).body, &b)
	if b.Object != "version" || b.Version != "unknown" || b.Commit != "unknown" || b.Go != runtime.Version() {
		t.Errorf("got /admin/version %+v, want version and commit unknown, go %s", b, runtime.Version())
	}
	call(url, "GET", "/admin/version", "", "", 401)
}
