package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"
)

// progressTool is the HTTP tool of tools.test.mjs: it streams 20 progress events 20 ms
// apart as SSE, then its result, which echoes the arguments.
func progressTool() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var args map[string]any
		_ = json.NewDecoder(r.Body).Decode(&args)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 1; i <= 20; i++ {
			fmt.Fprintf(w, "data: {\"kind\":\"progress\",\"done\":%d,\"total\":20,\"message\":\"batch %d\"}\n\n", i, i)
			_ = rc.Flush()
			time.Sleep(20 * time.Millisecond)
		}
		out, _ := json.Marshal(map[string]any{"kind": "result", "output": map[string]any{"rows": 20, "args": args}})
		fmt.Fprintf(w, "data: %s\n\n", out)
	}))
}
