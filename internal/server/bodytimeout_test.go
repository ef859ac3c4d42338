package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A body slower than limits.body_timeout is cut with 408 in the OpenAI error shape (the one
// error body of every wire, the UI's included, before its stream starts), on the /v1 routes
// behind the key check and on the admin API, and the access line says 408.
func TestBodyTimeout(t *testing.T) {
	const admin = "admin-token-for-tests"
	var log logBuffer
	url := serveGate(t, simConfig+"auth: {admin_token: "+admin+"}\nlimits: {body_timeout: 100ms}\n", nil, time.Minute, &log)
	_, key := createKey(t, url, admin, `{"models":["*"]}`)
	sc := newSpecCheck(t, &gateway{url: url})
	addr := strings.TrimPrefix(url, "http://")
	for _, tt := range []struct{ path, token string }{
		{"/v1/chat/completions", key}, {"/v1/responses", key}, {"/v1/embeddings", key}, {"/v1/ui/chat", key},
		{"/admin/keys", admin},
	} {
		t.Run(tt.path, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// 64 bytes announced, 9 sent, then nothing: a client at far less than the minimum rate.
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
				"Content-Length: 64\r\n\r\n{\"model\":", tt.path, tt.token)
			conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, it does not time it
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("got %v, want a 408", err)
			}
			body, _ := io.ReadAll(resp.Body)
			var e struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 408 || e.Error["code"] != "request_timeout" ||
				e.Error["type"] != "invalid_request_error" || e.Error["param"] != nil || !strings.Contains(fmt.Sprint(e.Error["message"]), "limits.body_timeout") {
				t.Fatalf("got %d %s, want 408 with the OpenAI error body, code request_timeout", resp.StatusCode, body)
			}
			if len(e.Error) != 4 || resp.Header.Get("Content-Type") != "application/json" || !resp.Close {
				t.Errorf("got %v %s, want exactly message, type, param, code as JSON, and Connection: close", resp.Header, body)
			}
			req, _ := http.NewRequest("POST", url+tt.path, strings.NewReader(`{"model":`))
			sc.response(t, &exchange{req: req, reqBody: []byte(`{"model":`), resp: resp, body: body})
		})
	}
	if n := len(regexp.MustCompile(`status=408`).FindAllString(log.String(), -1)); n != 5 {
		t.Errorf("got %d access lines with status=408, want 5:\n%s", n, log.String())
	}
}

// The body deadline ends with the body: a stream that lasts longer than body_timeout is
// served to its end, also when the key check read the body before the handler.
func TestBodyTimeoutSparesTheAnswer(t *testing.T) {
	const admin = "admin-token-for-tests"
	g := newGateway(t, baseConfig+"auth: {admin_token: "+admin+"}\nlimits: {body_timeout: 50ms}\n")
	_, key := createKey(t, g.url, admin, `{"models":["*"]}`)
	r := do(t, "POST", g.url+"/v1/chat/completions", key, chatBody("mock/text?len=400&chunk=40&delay=20ms", true, ""))
	f := frames(t, bytes.NewReader(r.body))
	if r.status != 200 || len(f) < 10 || f[len(f)-1] != "[DONE]" {
		t.Errorf("got %d and %d frames ending %q, want the whole stream and [DONE]", r.status, len(f), f[max(len(f)-1, 0):])
	}
}
