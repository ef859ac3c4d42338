package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/gcfloor"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// gatewayConfig is the gateway under test: the embedded defaults' features (redaction), a
// virtual key with rate limits high enough never to refuse (so authentication and the
// in-memory limiter run on every request), and the account of usage.
const gatewayConfig = `listen: "127.0.0.1:0"
providers:
  mock: {kind: openai-compatible, base_url: %q}
keys:
  - name: bench
    hash: 36e40e3794b629020f814bdb4e1bb1371d3743651d247941c489e46f7df4a21d
    limits: {rpm: 100000000, tpm: 100000000000}
`

// benchKey is the virtual key whose hash gatewayConfig lists; every load request carries it
// (the proxy passes it on to the mock, which ignores it).
const benchKey = "sk-sluice-bench-0123456789abcdefghijklmnopqrstuv"

// newGateway builds the gateway for the mock at upstream (its base URL, no /v1), its shared
// state in the Redis at redisURL (on_failure: open) when set: a URL, or "cluster:" and the
// nodes of a Redis Cluster, comma-separated.
func newGateway(upstream, redisURL string, log *slog.Logger) (*server.Server, error) {
	noEnv := func(string) (string, bool) { return "", false }
	yaml := fmt.Appendf(nil, gatewayConfig, upstream+"/v1")
	if addrs, ok := strings.CutPrefix(redisURL, "cluster:"); ok {
		yaml = fmt.Appendf(yaml, "redis: {cluster: {addrs: [%s]}, on_failure: open}\n", addrs)
	} else if redisURL != "" {
		yaml = fmt.Appendf(yaml, "redis: {url: %q, on_failure: open}\n", redisURL)
	}
	// SLUICE_BENCH_LOGS turns the request log on (a sqlite:// or postgres:// URL), to
	// measure what it costs the request path (issue 33); every child process reads it.
	if u := os.Getenv("SLUICE_BENCH_LOGS"); u != "" {
		yaml = fmt.Appendf(yaml, "logs: {url: %q}\n", u)
	}
	// SLUICE_BENCH_UPSTREAM (stream or plain) asks the gateway for the script's model name,
	// which the pattern alias text* routes to the mock with that upstream (issue 36). Every
	// script starting with text takes the default script's target, but the long scenario's,
	// which has an alias of its own; the memory scenario's script (its length follows
	// -streams) has none, so measure refuses that scenario with this set.
	if u := os.Getenv("SLUICE_BENCH_UPSTREAM"); u != "" {
		yaml = fmt.Appendf(yaml, "models:\n  \"text*\": {upstream: %s, targets: [\"mock/%s\"]}\n", u, script)
		yaml = fmt.Appendf(yaml, "  %q: {upstream: %s, targets: [\"mock/%s\"]}\n", longScript, u, longScript)
	}
	cfg, err := config.ParseWith(yaml, "sluicebench.yaml", noEnv)
	if err != nil {
		return nil, err
	}
	return gateway.New(cfg, log)
}

// newProxy is the physical floor: a bare reverse proxy in front of the mock. Its transport
// keeps as many idle connections per host as the gateway's provider client (256), so the
// comparison measures the gateway's own work, not a pool size.
func newProxy(upstream string) (http.Handler, *http.Transport, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, nil, err
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		FlushInterval: -1,
		Transport:     tr,
	}
	// The request body is read whole first, as the gateway does. Streamed as is, a share of
	// the streams break: once the answer's headers are written, the server closes the inbound
	// body under the transport, which still reads it once more after its Content-Length, and
	// tears the upstream connection down ("read error during body copy: use of closed network
	// connection", golang/go#40747).
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 10<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	})
	return h, tr, nil
}

// handler returns what a -serve kind serves; close releases what it holds.
func handler(kind, upstream, redisURL string, logw io.Writer) (h http.Handler, close func(), err error) {
	switch kind {
	case "mock":
		return mockllm.New(mockllm.Options{}), func() {}, nil
	case "gateway":
		if upstream == "" {
			return nil, nil, errors.New("-serve gateway needs -upstream")
		}
		// Telemetry as cmd/gateway sets it up by default: the SDK with Prometheus, no OTLP.
		sdk, err := telemetry.Setup(context.Background(), telemetry.Config{Prometheus: true,
			Getenv: func(string) string { return "" }})
		if err != nil {
			return nil, nil, err
		}
		floor, _ := gcfloor.Env(os.Getenv) // the collector's floor, as cmd/gateway sets it
		gc := gcfloor.Start(floor, nil)
		// Its lines written as cmd/gateway's off a terminal: JSON (the access line by hand,
		// telemetry.NewHandler), at once, or together with SLUICE_LOG_FLUSH.
		flush, _ := telemetry.LogFlushEnv(os.Getenv)
		log, closeLog := telemetry.NewLoggerTo(logw, "json", flush)
		srv, err := newGateway(upstream, redisURL, log)
		if err != nil {
			closeLog()
			gc.Stop()
			sdk.Shutdown(context.Background())
			return nil, nil, err
		}
		return srv, func() { srv.Close(); sdk.Shutdown(context.Background()); gc.Stop(); closeLog() }, nil
	case "proxy":
		if upstream == "" {
			return nil, nil, errors.New("-serve proxy needs -upstream")
		}
		h, tr, err := newProxy(upstream)
		if err != nil {
			return nil, nil, err
		}
		return h, tr.CloseIdleConnections, nil
	}
	return nil, nil, fmt.Errorf("-serve %q: want mock, gateway or proxy", kind)
}

// listener is one served handler and its admin side.
type listener struct {
	hs, as   *http.Server
	ln, aln  net.Listener
	wg       sync.WaitGroup
	release  func()
	profiler *profiler
}

// listen serves h on addr and the admin endpoints on another loopback port. The server has
// the settings of cmd/gateway (no WriteTimeout: it would cut streams). base, if set, is the
// base context of requests: the mock's streams end with it.
func listen(h http.Handler, addr string, base context.Context, logw io.Writer, profile string) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	aln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return nil, err
	}
	l := &listener{ln: ln, aln: aln, release: func() {}, profiler: &profiler{path: profile}}
	l.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: log.New(logw, "", log.LstdFlags)}
	if base != nil {
		l.hs.BaseContext = func(net.Listener) context.Context { return base }
	}
	l.as = &http.Server{Handler: l.admin(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: l.hs.ErrorLog}
	l.wg.Add(2)
	go func() { defer l.wg.Done(); l.hs.Serve(ln) }()
	go func() { defer l.wg.Done(); l.as.Serve(aln) }()
	return l, nil
}

// admin serves what the harness asks of a server process: its goroutine count, a return of
// free memory to the OS before an RSS baseline, closing idle connections (so pooled
// connections of earlier scenarios do not count as streams that did not end), and a CPU
// profile around one scenario.
func (l *listener) admin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /goroutines", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, runtime.NumGoroutine())
	})
	mux.HandleFunc("POST /freeos", func(w http.ResponseWriter, r *http.Request) { debug.FreeOSMemory() })
	// What the memory scenario splits RSS into: goroutine stacks and live heap objects,
	// after a collection (so dead objects do not count); the harness reads RSS before.
	mux.HandleFunc("GET /memstats", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		ms := []metrics.Sample{{Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(ms)
		fmt.Fprintln(w, ms[0].Value.Uint64(), ms[1].Value.Uint64())
	})
	mux.HandleFunc("POST /closeidle", func(w http.ResponseWriter, r *http.Request) {
		// SetKeepAlivesEnabled(false) closes the idle connections (net/http, server.go).
		l.hs.SetKeepAlivesEnabled(false)
		l.hs.SetKeepAlivesEnabled(true)
	})
	mux.HandleFunc("POST /cpuprofile/start", func(w http.ResponseWriter, r *http.Request) {
		if err := l.profiler.start(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("POST /cpuprofile/stop", func(w http.ResponseWriter, r *http.Request) {
		if err := l.profiler.stop(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	// The allocations since the process started (warm-ups included), sampled at the
	// runtime's default rate: where the garbage the collector pays for comes from. With
	// kind=goroutine, the goroutines' stacks, counted by stack (what a held stream waits in).
	mux.HandleFunc("POST /memprofile", func(w http.ResponseWriter, r *http.Request) {
		path, kind, debug := r.URL.Query().Get("path"), "allocs", 0
		if r.URL.Query().Get("kind") == "goroutine" {
			kind, debug = "goroutine", 1
		}
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup(kind).WriteTo(f, debug)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	return mux
}

// close stops both servers: open requests get a short grace, then are cut.
func (l *listener) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := l.hs.Shutdown(ctx); err != nil {
		l.hs.Close()
	}
	l.as.Close()
	l.wg.Wait()
	l.release()
	l.profiler.stop()
}

// profiler writes one CPU profile to path between start and stop (a second start truncates
// it). Safe for concurrent use.
type profiler struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func (p *profiler) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.path == "" || p.f != nil {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	p.f = f
	return nil
}

func (p *profiler) stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	return err
}

// serveChild is the -serve mode: it serves kind until ctx ends or stdin closes (the parent
// went away), after printing "listening ADDR ADMIN" on stdout. Logs go to stderr.
func serveChild(ctx context.Context, kind, addr, upstream, redisURL, profile string) error {
	// SLUICE_BENCH_MEMPROFILERATE samples the heap profiles finer than the runtime's default
	// (1: every allocation), to read -heldprofile to the byte.
	if n, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_MEMPROFILERATE")); err == nil && n > 0 {
		runtime.MemProfileRate = n
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// The parent holds our stdin open for our whole life: EOF means it is gone.
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	h, release, err := handler(kind, upstream, redisURL, os.Stderr)
	if err != nil {
		return err
	}
	var base context.Context
	if kind == "mock" {
		base = ctx
	}
	l, err := listen(h, addr, base, os.Stderr, profile)
	if err != nil {
		release()
		return err
	}
	l.release = release
	fmt.Printf("listening %s %s\n", l.ln.Addr(), l.aln.Addr())
	<-ctx.Done()
	l.close()
	return nil
}

// proc is a running server: in a child process (pid > 0) or in this one.
type proc struct {
	name  string
	url   string // http://host:port
	admin string // http://host:port of the admin endpoints
	model string // prefix of the mock script in the model name: "mock/" (gateway), "openai/" (Bifrost)
	pid   int
	stop  func() error
}

// spawn starts this binary with -serve kind in a child process, pinned by pn (a server to the
// servers' core, the mock to the others), its stderr appended to a log file in dir, and waits
// for its address. A gateway with redisURL keeps its state there.
func spawn(kind, upstream, redisURL, dir, profile string, pn pinning) (*proc, error) {
	return spawnAs(kind, kind, nil, upstream, redisURL, dir, profile, pn)
}

// spawnAs is spawn with the server named name (its log file too) and env as its environment
// (nil: this process's).
func spawnAs(kind, name string, env []string, upstream, redisURL, dir, profile string, pn pinning) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve", kind, "-addr", "127.0.0.1:0"}
	if upstream != "" {
		args = append(args, "-upstream", upstream)
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	logName := name
	if redisURL != "" {
		args = append(args, "-redis", redisURL)
		logName += "-redis"
	}
	logPath := filepath.Join(dir, logName+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(exe, args...)
	cmd.Stderr, cmd.Env = logf, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := pn.start(cmd, kind != "mock"); err != nil {
		return nil, err
	}
	waited := make(chan error, 1)
	stop := func() error {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-waited:
			return err
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			return fmt.Errorf("%s did not stop in 10 s: killed", kind)
		}
	}
	type ready struct {
		line string
		err  error
	}
	rc := make(chan ready, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			rc <- ready{line: sc.Text()}
		} else {
			rc <- ready{err: fmt.Errorf("%s exited before listening: see %s", kind, logPath)}
		}
		io.Copy(io.Discard, stdout)
		waited <- cmd.Wait()
	}()
	var r ready
	select {
	case r = <-rc:
	case <-time.After(30 * time.Second):
		r.err = fmt.Errorf("%s did not listen within 30 s: see %s", kind, logPath)
	}
	f := strings.Fields(r.line)
	if r.err == nil && (len(f) != 3 || f[0] != "listening") {
		r.err = fmt.Errorf("%s: unexpected first line %q", kind, r.line)
	}
	if r.err != nil {
		stop()
		return nil, r.err
	}
	return &proc{name: name, url: "http://" + f[1], admin: "http://" + f[2], model: modelPrefix(kind), pid: cmd.Process.Pid, stop: stop}, nil
}

// inProcess serves kind in this process, on its own listeners and http.Server.
func inProcess(ctx context.Context, kind, upstream, redisURL string) (*proc, error) {
	h, release, err := handler(kind, upstream, redisURL, io.Discard)
	if err != nil {
		return nil, err
	}
	var base context.Context
	if kind == "mock" {
		base = ctx
	}
	l, err := listen(h, "127.0.0.1:0", base, io.Discard, "")
	if err != nil {
		release()
		return nil, err
	}
	l.release = release
	return &proc{name: kind, url: "http://" + l.ln.Addr().String(), admin: "http://" + l.aln.Addr().String(),
		model: modelPrefix(kind), stop: func() error { l.close(); return nil }}, nil
}

// modelPrefix is what a server of kind needs before the mock script in the model name: the
// gateway's direct target names its provider; the proxy passes the script on as is.
func modelPrefix(kind string) string {
	if kind == "gateway" && os.Getenv("SLUICE_BENCH_UPSTREAM") == "" {
		return "mock/"
	}
	return ""
}

// cluster is the mock, the gateway, the proxy and the optional peer (Bifrost).
type cluster struct {
	mock, gateway, proxy, peer *proc
}

// targets are the servers under load in the order of a comparison's first half.
func (c *cluster) targets() []*proc {
	if c.peer == nil {
		return []*proc{c.proxy, c.gateway}
	}
	return []*proc{c.proxy, c.peer, c.gateway}
}

// start starts the servers, in child processes unless inproc, and the peer when pe names
// its binary, pinned by pn. profile, if set, is where the gateway writes its CPU profile.
func start(ctx context.Context, inproc bool, dir, profile string, pe peerEnv, pn pinning) (*cluster, error) {
	c := &cluster{}
	var err error
	launch := func(kind, upstream, profile string) (*proc, error) {
		if inproc {
			return inProcess(ctx, kind, upstream, "")
		}
		return spawn(kind, upstream, "", dir, profile, pn)
	}
	if c.mock, err = launch("mock", "", ""); err != nil {
		return nil, err
	}
	if c.gateway, err = launch("gateway", c.mock.url, profile); err != nil {
		c.stop()
		return nil, err
	}
	if c.proxy, err = launch("proxy", c.mock.url, ""); err != nil {
		c.stop()
		return nil, err
	}
	switch {
	case pe.twin != "" && inproc:
		err = errors.New("SLUICE_BENCH_PEER needs child processes")
	case pe.twin != "":
		c.peer, err = spawnAs("gateway", "gateway-"+pe.twin, pe.twinEnv(os.Environ()), c.mock.url, "", dir, "", pn)
	case pe.bin != "":
		c.peer, err = spawnBifrost(ctx, pe, c.mock.url, dir, pn)
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// stop stops the gateway and the proxy, then the mock (which closes their idle upstream
// connections).
func (c *cluster) stop() error {
	var errs []error
	for _, p := range []*proc{c.gateway, c.proxy, c.peer, c.mock} {
		if p != nil {
			if err := p.stop(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// rssKiB reads VmRSS of pid from /proc (Linux).
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// cpuTime is the user plus system CPU time of pid so far, from /proc/<pid>/stat (Linux; 0
// elsewhere or for pid 0, this process's own servers).
func cpuTime(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	d, _ := parseStat(b)
	return d
}

// parseStat is utime+stime of one /proc/<pid>/stat line (proc(5): fields 14 and 15, in clock
// ticks, taken as 100 per second, the USER_HZ of every Linux build we run on).
func parseStat(b []byte) (time.Duration, error) {
	// The command name, in parentheses, may hold spaces and ')': the fields counted here
	// start after its last ')', with field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want >= 13", len(f))
	}
	ut, err := strconv.ParseUint(f[11], 10, 63)
	if err != nil {
		return 0, fmt.Errorf("/proc stat utime: %w", err)
	}
	st, err := strconv.ParseUint(f[12], 10, 63)
	if err != nil {
		return 0, fmt.Errorf("/proc stat stime: %w", err)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// raiseNoFile raises the soft limit on open files to the hard limit: the memory scenario
// holds two descriptors per stream in the gateway, and children inherit the limit.
func raiseNoFile() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, err
		}
	}
	return lim.Cur, nil
}
