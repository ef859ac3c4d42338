package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stdio is the stdio transport (MCP 2025-06-18, "Transports"): the client starts the server
// as a process of its own and exchanges newline-delimited JSON-RPC messages over its stdin
// and stdout; the process's stderr is logged, at debug. The process is kept running: one
// that exits is started again after a pause (Config.Backoff, doubling up to maxBackoff,
// starting over after a process that ran for healthyRun). Each process is a session: a
// message of an earlier process's session is ErrSessionExpired (it was not sent), and the
// client initializes again. close stops the process as the specification asks: its stdin is
// closed, then after stopGrace it is sent SIGTERM, and after another stopGrace SIGKILL, with
// every process of its group (npx and the node it starts).
//
// The first process is started by New, so that the first use finds it running; while a
// process is being started again, a message fails at once (errNotRunning). One goroutine
// supervises the process (supervise, owned by the client's wait group); each process has two
// readers, its stdout and its stderr, which supervise waits for.
type stdio struct {
	c   *Client
	wmu sync.Mutex // one message written at a time

	mu     sync.Mutex
	cur    *proc // the running process; nil: none (starting again, or closed)
	gen    int
	closed bool
}

// proc is one run of the server's process.
type proc struct {
	name                  string // the session id of its sessions: "process N"
	cmd                   *exec.Cmd
	stdin, stdout, stderr *os.File
	readers               sync.WaitGroup // of stdout and stderr
	exited                chan struct{}  // closed when it ended and its readers are done
	// What answers the messages sent to it, by request id and by progress token; guarded
	// by stdio.mu, nil once it ended.
	ids    map[int64]*inbox
	tokens map[string]*inbox
}

const (
	maxBackoff   = 30 * time.Second
	healthyRun   = time.Minute
	stopGrace    = 2 * time.Second
	writeTimeout = 10 * time.Second // a process that does not read its stdin
	maxStderr    = 1024             // of one logged line of stderr
)

// errNotRunning is the answer to a message while the process is being started again.
var errNotRunning = errors.New("the MCP server's process is not running (it is being started again)")

// startStdio starts the server's process, then its supervisor: the first use finds it
// running.
func startStdio(c *Client) *stdio {
	t := &stdio{c: c}
	p, err := t.start()
	c.wg.Add(1)
	go t.supervise(p, err)
	return t
}

// supervise waits for the process p (nil: it failed to start, with err) to end, and starts
// it again after a pause, until the client closes.
func (t *stdio) supervise(p *proc, err error) {
	defer t.c.wg.Done()
	first := t.c.cfg.Backoff
	if first <= 0 {
		first = 100 * time.Millisecond
	}
	pause := first
	for {
		began := time.Now()
		if p != nil {
			err = t.wait(p)
		}
		if t.c.listen.Err() != nil {
			return
		}
		if time.Since(began) >= healthyRun {
			pause = first
		}
		t.c.cfg.Log.Warn("mcp: the server's process ended; starting it again", "server", t.c.name(),
			"err", err.Error(), "in", pause.String())
		tm := time.NewTimer(pause)
		select {
		case <-t.c.listen.Done():
			tm.Stop()
			return
		case <-tm.C:
		}
		pause = min(2*pause, maxBackoff)
		p, err = t.start()
	}
}

// start starts the process and its readers.
func (t *stdio) start() (*proc, error) {
	cfg := t.c.cfg
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir, cmd.Env = cfg.Dir, environ(cfg.Env)
	ownGroup(cmd)
	var ends [6]*os.File // stdin, stdout, stderr: the child's end, then ours
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(ends[:])
			return nil, err
		}
		if i == 0 {
			ends[i], ends[3+i] = r, w
		} else {
			ends[i], ends[3+i] = w, r
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[1], ends[2]
	err := cmd.Start()
	closeAll(ends[:3])
	if err != nil {
		closeAll(ends[3:])
		return nil, fmt.Errorf("starting the process: %w", err)
	}
	p := &proc{cmd: cmd, stdin: ends[3], stdout: ends[4], stderr: ends[5], exited: make(chan struct{}),
		ids: map[int64]*inbox{}, tokens: map[string]*inbox{}}
	t.mu.Lock()
	t.gen++
	p.name = "process " + strconv.Itoa(t.gen)
	again, closed := t.gen > 1, t.closed
	if !closed {
		t.cur = p
	}
	t.mu.Unlock()
	if closed {
		signalGroup(cmd.Process, true)
	}
	p.readers.Add(2)
	go func() {
		defer p.readers.Done()
		t.read(p, p.stdout)
	}()
	go func() {
		defer p.readers.Done()
		t.logStderr(p.stderr)
	}()
	t.c.cfg.Log.Info("mcp: the server's process started", "server", t.c.name(), "pid", cmd.Process.Pid)
	if again && !closed {
		t.c.notified() // a new process: its tools are listed again, in a new session
	}
	return p, nil
}

// wait returns when p ended, its readers done and what waited on it failed.
func (t *stdio) wait(p *proc) error {
	werr := p.cmd.Wait()
	t.mu.Lock()
	if t.cur == p {
		t.cur = nil // no new call goes to it
	}
	t.mu.Unlock()
	p.stdin.Close()
	signalGroup(p.cmd.Process, true) // what it started, which may hold its stdout open
	grace := time.Now().Add(stopGrace)
	p.stdout.SetReadDeadline(grace)
	p.stderr.SetReadDeadline(grace)
	p.readers.Wait()
	p.stdout.Close()
	p.stderr.Close()
	// Only now, once its stdout was read to the end: what the process wrote before it
	// ended (a progress report, even an answer) still reaches the call that waits for it.
	t.mu.Lock()
	waiting := p.ids
	p.ids, p.tokens = nil, nil
	t.mu.Unlock()
	err := errors.New("the process exited")
	if werr != nil {
		err = fmt.Errorf("the process ended: %w", werr)
	}
	for _, in := range waiting {
		in.fail(fmt.Errorf("the MCP server's process ended before its answer (%v)", err))
	}
	close(p.exited)
	return err
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// inherited are the variables of the gateway's environment a local server gets, as the MCP
// SDKs' stdio clients pass them (getDefaultEnvironment): enough to find and run a program,
// nothing of the gateway's own (its provider keys). Config.Env adds the rest.
var inherited = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

func environ(extra map[string]string) []string {
	var env []string
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k]) // a later duplicate wins (os/exec)
	}
	return env
}

// post writes one message to the running process. A message of a session of an earlier
// process is not written: ErrSessionExpired.
func (t *stdio) post(ctx context.Context, out outgoing, s session) (reply, error) {
	t.mu.Lock()
	p := t.cur
	switch {
	case p == nil:
		t.mu.Unlock()
		return nil, errNotRunning
	case s.id != "" && s.id != p.name:
		t.mu.Unlock()
		t.c.expire(s)
		return nil, fmt.Errorf("%w (it was a session of the server's previous process)", ErrSessionExpired)
	}
	var in *inbox
	if out.id != 0 {
		in = &inbox{ctx: ctx, t: t, p: p, id: out.id, token: out.token, alive: out.alive,
			wake: make(chan struct{}, 1), done: make(chan struct{})}
		p.ids[out.id] = in
		if out.token != "" {
			p.tokens[out.token] = in
		}
	}
	t.mu.Unlock()
	if err := t.write(ctx, p, out.body); err != nil {
		if in != nil {
			in.Close()
		}
		return nil, err
	}
	if in == nil {
		return emptyReply{sid: p.name}, nil
	}
	return in, nil
}

// write writes one message and its newline (json.Marshal writes none inside it), within
// ctx's deadline and writeTimeout.
func (t *stdio) write(ctx context.Context, p *proc, body []byte) error {
	line := make([]byte, 0, len(body)+1)
	line = append(append(line, body...), '\n')
	t.wmu.Lock()
	defer t.wmu.Unlock()
	dl := time.Now().Add(writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	p.stdin.SetWriteDeadline(dl)
	if _, err := p.stdin.Write(line); err != nil {
		return fmt.Errorf("writing to the MCP server's process: %w", err)
	}
	return nil
}

func (t *stdio) opened(session) {}

// close stops the process: stdin closed, then SIGTERM, then SIGKILL (MCP stdio, "Shutdown").
func (t *stdio) close(session) {
	t.mu.Lock()
	t.closed = true
	p := t.cur
	t.mu.Unlock()
	if p == nil {
		return // between two processes: the supervisor sees the client's context end
	}
	p.stdin.Close()
	for _, kill := range []bool{false, true} {
		tm := time.NewTimer(stopGrace)
		select {
		case <-p.exited:
			tm.Stop()
			return
		case <-tm.C:
		}
		signalGroup(p.cmd.Process, kill)
	}
	<-p.exited
}

// read routes the process's stdout, one message a line: a response and the progress of its
// token to what waits for it, anything else to the client (handle). A line that is not
// JSON-RPC (a server that logs to stdout) is logged and skipped.
func (t *stdio) read(p *proc, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	s := session{id: p.name}
	for {
		line, err := readLine(br, maxJSON)
		if errors.Is(err, errLongLine) {
			t.c.cfg.Log.Warn("mcp: a message of the server is too large; skipped", "server", t.c.name(), "max_bytes", maxJSON)
			continue
		}
		if err != nil {
			return // its end (a cut last line is nothing)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var ms []message
		if line[0] == '[' {
			err = json.Unmarshal(line, &ms)
		} else {
			var m message
			err = json.Unmarshal(line, &m)
			ms = []message{m}
		}
		if err != nil {
			t.c.cfg.Log.Debug("mcp: a line of the server's stdout is not JSON-RPC; skipped", "server", t.c.name())
			continue
		}
		for _, m := range ms {
			t.route(p, m, s)
		}
	}
}

func (t *stdio) route(p *proc, m message, s session) {
	var in *inbox
	t.mu.Lock()
	switch {
	case m.isResponse():
		if id, err := strconv.ParseInt(strings.Trim(string(m.ID), `"`), 10, 64); err == nil {
			if in = p.ids[id]; in != nil {
				delete(p.ids, id)
				delete(p.tokens, in.token)
			}
		}
	case m.Method == "notifications/progress":
		var pr struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(m.Params, &pr) == nil {
			in = p.tokens[strings.Trim(string(pr.Token), `"`)]
		}
	}
	t.mu.Unlock()
	switch {
	case in != nil:
		in.deliver(m)
	case m.isResponse(): // to a request given up on
	default:
		t.c.handle(m, s)
	}
}

func (t *stdio) logStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := readLine(br, maxStderr)
		if len(line) > 0 {
			t.c.cfg.Log.Debug("mcp: the server's stderr", "server", t.c.name(), "line", string(line))
		}
		if err != nil && !errors.Is(err, errLongLine) {
			return
		}
	}
}

var errLongLine = errors.New("mcp: line too long")

// readLine reads one line without its newline; a longer one than max is cut at max, the rest
// skipped, with errLongLine. At the end of input, the cut last line and io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		if !long {
			if len(line)+len(body) > max {
				line, long = append(line, body[:max-len(line)]...), true
			} else {
				line = append(line, body...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return line, err
		}
		if long {
			return line, errLongLine
		}
		return line, nil
	}
}

// inbox is what answers one request of the process: its progress, then its response. It
// holds the newest progress only (a newer report supersedes an older one that was not read:
// the reader never waits for a slow caller) and the response. Its context is the request's:
// canceling it ends a next in progress, as it ends an HTTP answer's read.
type inbox struct {
	ctx   context.Context
	t     *stdio
	p     *proc
	id    int64
	token string
	alive func()
	wake  chan struct{} // capacity 1
	done  chan struct{} // closed by Close
	once  sync.Once

	mu       sync.Mutex
	progress *message
	resp     *message
	ended    bool  // the response was read
	err      error // the process ended before the response
}

func (b *inbox) deliver(m message) {
	b.mu.Lock()
	if m.isResponse() {
		b.resp = &m
	} else {
		b.progress = &m
	}
	b.mu.Unlock()
	if b.alive != nil {
		b.alive()
	}
	b.signal()
}

func (b *inbox) fail(err error) {
	b.mu.Lock()
	b.err = err
	b.mu.Unlock()
	b.signal()
}

func (b *inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *inbox) next() (message, error) {
	for {
		b.mu.Lock()
		var m *message
		switch {
		case b.progress != nil:
			m, b.progress = b.progress, nil
		case b.resp != nil:
			m, b.resp, b.ended = b.resp, nil, true
		case b.ended:
			b.mu.Unlock()
			return message{}, io.EOF
		case b.err != nil:
			err := b.err
			b.mu.Unlock()
			return message{}, err
		}
		b.mu.Unlock()
		if m != nil {
			return *m, nil
		}
		select {
		case <-b.wake:
		case <-b.ctx.Done():
			return message{}, context.Cause(b.ctx)
		case <-b.done:
			return message{}, errors.New("mcp: the answer was closed")
		}
	}
}

// Close lets the answer go: what the process still sends for it is dropped.
func (b *inbox) Close() error {
	b.once.Do(func() {
		b.t.mu.Lock()
		if b.p.ids[b.id] == b {
			delete(b.p.ids, b.id)
			delete(b.p.tokens, b.token)
		}
		b.t.mu.Unlock()
		close(b.done)
	})
	return nil
}

// streams: a call's answer is a stream of messages, watched for liveness like an SSE answer
// (a process that ended fails it at once).
func (b *inbox) streams() bool   { return true }
func (b *inbox) session() string { return b.p.name }
