package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// ServeStdio serves the server's tools over the stdio transport: newline-delimited JSON-RPC
// messages read from in and written to out (one session: the process's). Calls run
// concurrently and are canceled by notifications/cancelled; a change of the tools is
// notified. It returns at the end of in, once the calls in flight ended.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wmu sync.Mutex
	send := func(m message) {
		wmu.Lock()
		defer wmu.Unlock()
		fmt.Fprintf(out, "%s\n", mustJSON(m))
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	changed, unsubscribe := s.subscribe()
	defer unsubscribe()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				send(message{Method: "notifications/tools/list_changed"})
			}
		}
	}()

	var cmu sync.Mutex
	calls := map[string]context.CancelFunc{} // by request id
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			s.mu.Lock()
			s.inits++
			s.mu.Unlock()
			send(message{ID: m.ID, Result: s.initialized(true)})
		case m.Method == "notifications/cancelled":
			id := s.cancel(m)
			cmu.Lock()
			if stop := calls[id]; stop != nil {
				stop()
			}
			cmu.Unlock()
		case len(m.ID) == 0 || m.Method == "": // other notifications, responses
		case m.Method == "tools/list":
			send(message{ID: m.ID, Result: s.list()})
		case m.Method == "ping":
			send(message{ID: m.ID, Result: map[string]any{}})
		case m.Method == "tools/call":
			tool, p := s.lookup(m)
			if tool == nil {
				send(unknownTool(m, p))
				continue
			}
			cctx, stop := context.WithCancel(ctx)
			cmu.Lock()
			calls[string(m.ID)] = stop
			cmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer stop()
				run(cctx, m, tool, p, send)
				cmu.Lock()
				delete(calls, string(m.ID))
				cmu.Unlock()
			}()
		default:
			send(message{ID: m.ID, Error: map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
	cancel() // stdin closed: the client is gone, and with it the calls
	return sc.Err()
}

// StdioEnv is the variable that makes a test binary the stdio server Main runs: a test's
// TestMain calls Main first, and the test starts its own binary (os.Args[0]) with
// StdioEnv=1 as the local server.
const StdioEnv = "SLUICE_MCPTEST_STDIO"

// StubbornEnv, set with StdioEnv, makes the server stay when its stdin closes.
const StubbornEnv = "SLUICE_MCPTEST_STUBBORN"

// Main serves Child over stdin and stdout and exits when StdioEnv is set; otherwise it
// returns at once.
func Main() {
	if os.Getenv(StdioEnv) == "" {
		return
	}
	err := New(Child()...).ServeStdio(context.Background(), os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	if os.Getenv(StubbornEnv) != "" {
		select {} // a server that does not exit when its stdin closes: it waits for SIGTERM
	}
	os.Exit(0)
}

// Child are the tools of the stdio server Main runs, which report on the process they run in:
//   - calls: how many calls of it this process ran, with a progress report first;
//   - pid: the process id;
//   - env: the value of the variable {"name": ...}, or "<unset>";
//   - stderr: writes {"text": ...} as a line to stderr, then answers "ok";
//   - exit: reports progress, then the process exits (status 3) before answering;
//   - wait: reports progress, then waits until canceled.
func Child() []Tool {
	var mu sync.Mutex
	n := 0
	return []Tool{
		{Name: "calls", Description: "Counts its calls.", Run: func(_ context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
			progress(1, 1, "counting")
			mu.Lock()
			defer mu.Unlock()
			n++
			return strconv.Itoa(n), false
		}},
		{Name: "pid", Run: func(context.Context, json.RawMessage, func(float64, float64, string)) (string, bool) {
			return strconv.Itoa(os.Getpid()), false
		}},
		{Name: "env", Run: func(_ context.Context, args json.RawMessage, _ func(float64, float64, string)) (string, bool) {
			var a struct{ Name string }
			_ = json.Unmarshal(args, &a)
			v, ok := os.LookupEnv(a.Name)
			if !ok {
				return "<unset>", false
			}
			return v, false
		}},
		{Name: "stderr", Run: func(_ context.Context, args json.RawMessage, _ func(float64, float64, string)) (string, bool) {
			var a struct{ Text string }
			_ = json.Unmarshal(args, &a)
			fmt.Fprintln(os.Stderr, a.Text)
			return "ok", false
		}},
		{Name: "exit", Run: func(_ context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
			progress(1, 2, "exiting")
			os.Exit(3)
			return "", true
		}},
		{Name: "wait", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
			progress(1, 0, "waiting")
			<-ctx.Done()
			return "canceled", true
		}},
	}
}
