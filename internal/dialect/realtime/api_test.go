package realtime

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
)

// FuzzDecode: any handshake and query is a session's model or a 4xx, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add("websocket", "Upgrade", "13", "dGhlIHNhbXBsZSBub25jZQ==", "model=gpt-realtime")
	f.Add("websocket", "keep-alive, Upgrade", "13", "k", "deployment=dep")
	f.Add("h2c", "Upgrade", "8", "", "model=")
	f.Add("websocket", "upgrade", "13", "k", "model=%zz&model=a")
	f.Fuzz(func(t *testing.T, upgrade, connection, version, key, query string) {
		h := http.Header{"Upgrade": {upgrade}, "Connection": {connection}, "Sec-Websocket-Version": {version}, "Sec-Websocket-Key": {key}}
		q, _ := url.ParseQuery(query)
		d, err := Decode(nil, dialect.Input{Op: dialect.Realtime, Header: h.Get, Query: q.Get})
		if err != nil {
			if s := llm.HTTPStatus(err); s < 400 || s >= 500 {
				t.Fatalf("got %d (%v), want a 4xx", s, err)
			}
			return
		}
		if d.Model == "" || d.Req == nil || d.Req.Model != d.Model {
			t.Fatalf("got %+v, want the model decoded", d)
		}
	})
}
