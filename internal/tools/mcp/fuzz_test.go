package mcp

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// FuzzAnswer feeds any bytes to a call's reader, as an event stream and as a JSON answer: it
// never panics and ends with the result, io.EOF after it, or an error.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"sluice-1\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":"1","error":{"code":-1,"message":"no"}}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ct := range []string{"text/event-stream", "application/json"} {
			resp := &http.Response{Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(b))}
			st, err := newStream(resp, func() {})
			if err != nil {
				continue
			}
			k := &Call{c: New(Config{}), id: 1, token: "sluice-1", st: st}
			for i := 0; i <= len(b)+1; i++ {
				if _, err := k.Recv(); err != nil {
					break
				}
			}
			k.done = true // nothing to cancel: the fuzz has no server
			k.Close()
		}
	})
}
