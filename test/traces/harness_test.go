package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jaegerBin is the Jaeger binary make test-fleet built (SLUICE_JAEGER). Without it the tests
// are skipped, unless make test-fleet runs them (SLUICE_FLEET_TEST): then it is a failure.
func jaegerBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SLUICE_JAEGER")
	if bin == "" {
		if os.Getenv("SLUICE_FLEET_TEST") != "" {
			t.Fatal("SLUICE_JAEGER is not set; make test-fleet builds Jaeger (tools/jaeger) and sets it")
		}
		t.Skip("the trace tests run with make test-fleet")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("SLUICE_JAEGER: %v", err)
	}
	return bin
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// process is a program the test started; stop ends it with SIGTERM and waits (SIGKILL after
// 20 s), once. Its output is in log, shown when the test failed.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when cmd.Wait returned
}

func start(t *testing.T, name string, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, log: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("== %s log\n%s", name, b)
		}
	})
	return p
}

func (p *process) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop on SIGTERM", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitHTTP waits until url answers 200, or p exits, for at most a minute (a busy machine).
func waitHTTP(t *testing.T, p *process, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited before %s answered", p.name, url)
		default:
		}
		if r, err := http.Get(url); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %s did not answer 200 within a minute", p.name, url)
}

// jaeger is a running Jaeger v2 with tools/jaeger/config.yaml: OTLP in, memory storage, the
// query API (the v1 JSON API the UI reads).
type jaeger struct {
	otlp  string // OTLP over HTTP: http://127.0.0.1:port
	query string // http://127.0.0.1:port
}

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	bin := jaegerBin(t)
	cfg, err := filepath.Abs("../../tools/jaeger/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	otlpHTTP, query := freeAddr(t), freeAddr(t)
	env := []string{"JAEGER_OTLP_HTTP=" + otlpHTTP, "JAEGER_OTLP_GRPC=" + freeAddr(t),
		"JAEGER_QUERY_HTTP=" + query, "JAEGER_QUERY_GRPC=" + freeAddr(t)}
	p := start(t, "jaeger", env, bin, "--config", "file:"+cfg)
	j := &jaeger{otlp: "http://" + otlpHTTP, query: "http://" + query}
	waitHTTP(t, p, j.query+"/api/services")
	// The receiver answers 405 to a GET once it listens.
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", otlpHTTP)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger's OTLP receiver did not listen on %s", otlpHTTP)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return j
}

// jTrace, jSpan and jTag are the Jaeger query API's JSON (api/traces).
type jTrace struct {
	TraceID   string  `json:"traceID"`
	Spans     []jSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
		Tags        []jTag `json:"tags"`
	} `json:"processes"`
}

type jSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []jTag `json:"tags"`
	Logs []struct {
		Fields []jTag `json:"fields"`
	} `json:"logs"`
}

type jTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// tag is the value of the span's tag k as text ("" when absent), and whether it is there.
func (s jSpan) tag(k string) (string, bool) {
	for _, tg := range s.Tags {
		if tg.Key == k {
			return fmt.Sprint(tg.Value), true
		}
	}
	return "", false
}

// parent is the span's parent span id ("" for a root).
func (s jSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return pad(r.SpanID, 16)
		}
	}
	return ""
}

// events are the names of the span's events (Jaeger's logs, whose "event" field names them).
func (s jSpan) events() []string {
	var names []string
	for _, l := range s.Logs {
		for _, f := range l.Fields {
			if f.Key == "event" {
				names = append(names, fmt.Sprint(f.Value))
			}
		}
	}
	return names
}

// pad restores the leading zeros Jaeger's JSON drops from ids.
func pad(id string, n int) string {
	return strings.Repeat("0", max(n-len(id), 0)) + id
}

// fetch GETs path of the query API.
func (j *jaeger) fetch(t *testing.T, path string) (int, []byte) {
	t.Helper()
	r, err := http.Get(j.query + path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, b
}

// get decodes the JSON answer of a GET of the query API into v, when it is a 200.
func (j *jaeger) get(t *testing.T, path string, v any) int {
	t.Helper()
	code, b := j.fetch(t, path)
	if code == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, b)
		}
	}
	return code
}

// raw is the body of a GET of the query API, which must answer 200.
func (j *jaeger) raw(t *testing.T, path string) string {
	t.Helper()
	code, b := j.fetch(t, path)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, b)
	}
	return string(b)
}

// trace is one trace by id (32 hex digits), or nil when Jaeger has none.
func (j *jaeger) trace(t *testing.T, id string) *jTrace {
	t.Helper()
	var body struct{ Data []jTrace }
	if j.get(t, "/api/traces/"+id, &body) != 200 || len(body.Data) == 0 {
		return nil
	}
	if len(body.Data) != 1 {
		t.Fatalf("trace %s: %d traces", id, len(body.Data))
	}
	return &body.Data[0]
}

// traces are the traces of service whose root operation is op ("": any), at most 1000.
func (j *jaeger) traces(t *testing.T, service, op string) []jTrace {
	t.Helper()
	path := "/api/traces?limit=1000&lookback=1h&service=" + service
	if op != "" {
		path += "&operation=" + strings.ReplaceAll(op, " ", "%20")
	}
	var body struct{ Data []jTrace }
	if code := j.get(t, path, &body); code != 200 {
		t.Fatalf("GET %s: %d", path, code)
	}
	return body.Data
}

// gateway is a running cmd/gateway exporting its spans to Jaeger as service.
type gateway struct {
	url     string
	service string
	p       *process
}

// buildGateway builds cmd/gateway once per test binary.
func buildGateway(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir, "./cmd/gateway")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/gateway: %v\n%s", err, out)
	}
	return filepath.Join(dir, "gateway")
}

// startGateway runs bin with the configuration yaml, OTLP over HTTP to j as service. Spans
// leave in batches a few milliseconds apart; everything is flushed when the gateway stops.
func startGateway(t *testing.T, bin string, j *jaeger, service, yaml string, env ...string) *gateway {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), service+".yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	env = append(env, "SLUICE_LISTEN="+addr, "OTLP_URL="+j.otlp, "OTEL_SERVICE_NAME="+service,
		// Jaeger takes no metrics: only the spans go out over OTLP (/metrics is scraped).
		"OTEL_METRICS_EXPORTER=none", "OTEL_BSP_SCHEDULE_DELAY=50", "SLUICE_LOG_FORMAT=json")
	g := &gateway{url: "http://" + addr, service: service}
	g.p = start(t, service, env, bin, "--config", cfg, "--grace", "5s")
	waitHTTP(t, g.p, g.url+"/readyz")
	return g
}

// reply is an answer the test read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// post sends body to the gateway's path with the key (and the headers h, name then value).
func (g *gateway) post(t *testing.T, path, key, body string, h ...string) reply {
	t.Helper()
	req, _ := http.NewRequest("POST", g.url+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

// traceID is the trace of an answer, from its traceresponse header.
func (r reply) traceID(t *testing.T) string {
	t.Helper()
	parts := strings.Split(r.header.Get("Traceresponse"), "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		t.Fatalf("traceresponse %q, want 00-<trace>-<span>-<flags>", r.header.Get("Traceresponse"))
	}
	return parts[1]
}
