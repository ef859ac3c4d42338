package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// command is one curl command of a sh block, its continued lines joined.
type command struct {
	file string
	line int // of its first line
	text string
}

// curls returns the commands of p's sh blocks that start with curl; a line ending in a
// backslash continues on the next.
func (p page) curls() []command {
	var out []command
	for _, b := range p.blocks() {
		if b.info != "sh" {
			continue
		}
		for i := 0; i < len(b.body); i++ {
			c := command{file: b.file, line: b.line + 1 + i}
			text := b.body[i]
			for strings.HasSuffix(text, `\`) && i+1 < len(b.body) {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.body[i])
			}
			if c.text = strings.TrimSpace(text); strings.HasPrefix(c.text, "curl ") {
				out = append(out, c)
			}
		}
	}
	return out
}

var expectComment = regexp.MustCompile(`^#\s*expect\s+(\d{3})\s*$`)

// words splits a command as sh would, for the one form a quickstart's curl takes: words,
// 'single' and "double" quotes, backslash escapes, $VAR and ${VAR} from env (unset: an
// error, not an empty word), and a trailing # comment, whose "# expect NNN" is the status
// the command must get (0: any 2xx). Pipes, redirections, lists and command substitutions
// are refused: the test runs curl itself, and what a shell would do around it is not checked.
func words(cmd string, env map[string]string) (args []string, expect int, err error) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			args = append(args, w.String())
		}
		w.Reset()
		inWord = false
	}
	variable := func(i int) (int, error) { // cmd[i] == '$'
		name, end := "", i+1
		switch {
		case strings.HasPrefix(cmd[i+1:], "{"):
			j := strings.IndexByte(cmd[i:], '}')
			if j < 0 {
				return 0, errors.New("an unclosed ${")
			}
			name, end = cmd[i+2:i+j], i+j+1
		case strings.HasPrefix(cmd[i+1:], "("):
			return 0, errors.New("a command substitution $(...): write the value")
		default:
			for end < len(cmd) && (cmd[end] == '_' || 'A' <= cmd[end] && cmd[end] <= 'Z' || 'a' <= cmd[end] && cmd[end] <= 'z' || end > i+1 && '0' <= cmd[end] && cmd[end] <= '9') {
				end++
			}
			name = cmd[i+1 : end]
		}
		if name == "" {
			w.WriteByte('$')
			return i + 1, nil
		}
		v, ok := env[name]
		if !ok {
			return 0, fmt.Errorf("uses $%s, which the embedded default gives no value: a quickstart must run against make run as written", name)
		}
		w.WriteString(v)
		return end, nil
	}
	for i := 0; i < len(cmd); {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
			i++
		case c == '#' && !inWord:
			comment := strings.TrimSpace(cmd[i:])
			if m := expectComment.FindStringSubmatch(comment); m != nil {
				expect, _ = strconv.Atoi(m[1])
			}
			i = len(cmd)
		case strings.IndexByte("|&;<>()`", c) >= 0:
			return nil, 0, fmt.Errorf("%q: a pipe, redirection, list or subshell; write one plain curl command", c)
		case c == '\\':
			inWord = true
			if i+1 < len(cmd) {
				w.WriteByte(cmd[i+1])
			}
			i += 2
		case c == '\'':
			inWord = true
			end := strings.IndexByte(cmd[i+1:], '\'')
			if end < 0 {
				return nil, 0, errors.New("an unclosed '")
			}
			w.WriteString(cmd[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			inWord = true
			for i++; ; {
				if i >= len(cmd) {
					return nil, 0, errors.New(`an unclosed "`)
				}
				switch cmd[i] {
				case '"':
					i++
				case '\\':
					if i+1 < len(cmd) && strings.IndexByte("$`\"\\", cmd[i+1]) >= 0 {
						i++
					}
					w.WriteByte(cmd[i])
					i++
					continue
				case '$':
					if i, err = variable(i); err != nil {
						return nil, 0, err
					}
					continue
				case '`':
					return nil, 0, errors.New("a command substitution `...`: write the value")
				default:
					w.WriteByte(cmd[i])
					i++
					continue
				}
				break
			}
		case c == '$':
			inWord = true
			if i, err = variable(i); err != nil {
				return nil, 0, err
			}
		default:
			inWord = true
			w.WriteByte(c)
			i++
		}
	}
	flush()
	return args, expect, nil
}

// ownFlags are the curl options the test sets itself, to read the status.
var ownFlags = map[string]bool{"-o": true, "--output": true, "-O": true, "--remote-name": true, "-w": true, "--write-out": true}

// runCurl runs c with the real curl against the gateway at addr (host:port), its
// http://127.0.0.1:8080 and localhost:8080 rewritten to it, and checks the status: 2xx, or
// the one its # expect NNN names.
func runCurl(ctx context.Context, c command, addr string, env map[string]string) error {
	args, expect, err := words(c.text, env)
	if err != nil {
		return err
	}
	rw := strings.NewReplacer("http://127.0.0.1:8080", "http://"+addr, "http://localhost:8080", "http://"+addr,
		"127.0.0.1:8080", addr, "localhost:8080", addr)
	calls := false
	for i, a := range args[1:] {
		if ownFlags[a] {
			return fmt.Errorf("sets %s, which the test sets to read the status", a)
		}
		if r := rw.Replace(a); r != a {
			args[i+1], calls = r, true
		}
	}
	if !calls {
		return errors.New("calls no http://127.0.0.1:8080 or localhost:8080 (the gateway make run starts)")
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// -q (first): no ~/.curlrc; --noproxy: a proxy in the environment must not take the
	// loopback calls.
	flags := []string{"-q", "-s", "-S", "--noproxy", "*", "--max-time", "10", "-o", os.DevNull, "-w", "%{http_code}"}
	cmd := exec.CommandContext(ctx, "curl", append(flags, args[1:]...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("curl: %v: %s (status %s)", err, strings.TrimSpace(stderr.String()), out.String())
	}
	status, err := strconv.Atoi(strings.TrimSpace(out.String()))
	switch {
	case err != nil:
		return fmt.Errorf("curl wrote %q, want a status", out.String())
	case expect == 0 && (status < 200 || status > 299):
		return fmt.Errorf("got status %d, want 2xx (or say the status it answers: # expect %d)", status, status)
	case expect != 0 && status != expect:
		return fmt.Errorf("got status %d, want %d (# expect %d)", status, expect, expect)
	}
	return nil
}

// startDefault serves the embedded default as make run does (cmd/gateway): in an empty
// environment (no provider key: the simulated provider answers; no admin token; no Redis),
// on a free loopback port, its request log in a temporary directory. It returns host:port
// and the variables a command may use: those the configuration gives a value.
func startDefault(t *testing.T) (string, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "internal", "config", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // the default's logs: sqlite://./data/logs.db is relative
	cfg, err := config.ParseWith(data, "default.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckListen(); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	if cfg.Auth.AdminToken != "" {
		env["SLUICE_ADMIN_TOKEN"] = cfg.Auth.AdminToken
	}
	log := slog.New(slog.DiscardHandler)
	sdk, err := telemetry.Setup(t.Context(), telemetry.Config{Prometheus: cfg.Telemetry.Prometheus, Log: log,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ConnContext: server.ConnContext}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Drain()
		if err := hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		_ = sdk.Shutdown(ctx)
	})
	return ln.Addr().String(), env
}

// TestQuickstartCurls runs every curl of the README's sh blocks against the embedded default.
func TestQuickstartCurls(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed: the README's examples run with it")
	}
	dir := root(t)
	readme := pages(t, dir)[0]
	if readme.name != "README.md" {
		t.Fatalf("got %s first, want README.md", readme.name)
	}
	cs := readme.curls()
	if len(cs) == 0 {
		t.Fatal("found no curl in the README: the extractor is broken")
	}
	addr, env := startDefault(t)
	for _, c := range cs {
		if err := runCurl(t.Context(), c, addr, env); err != nil {
			t.Errorf("%s:%d: %s\n\t%s", c.file, c.line, err, c.text)
		}
	}
}
