package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// redisRate is the open loop of the redis-hung scenario, per second: a steady load, not a
// saturation; what it measures is the time each request spends on a Redis that never answers.
const redisRate = 200

// redisTimeout is redis.timeout, the default the gateway of this scenario runs with.
const redisTimeout = 250 * time.Millisecond

// redisServer is a redistest.ServerBin child on a unix socket in dir, no persistence.
type redisServer struct {
	cmd    *exec.Cmd
	socket string
}

// startRedis starts redistest.ServerBin from PATH and waits until it answers PING.
func startRedis(dir string) (*redisServer, error) {
	bin, err := exec.LookPath(redistest.ServerBin())
	if err != nil {
		return nil, err
	}
	r := &redisServer{socket: filepath.Join(dir, "redis.sock")}
	r.cmd = exec.Command(bin, "--port", "0", "--unixsocket", r.socket, "--unixsocketperm", "700",
		"--dir", dir, "--save", "", "--appendonly", "no", "--loglevel", "warning")
	logf, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(10 * time.Second); !r.answers(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("redis-server did not answer on %s within 10 s", r.socket)
		}
	}
	return r, nil
}

func (r *redisServer) answers() bool {
	c, err := net.DialTimeout("unix", r.socket, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

func (r *redisServer) signal(sig syscall.Signal) error { return r.cmd.Process.Signal(sig) }

// stop kills the server, stopped or not.
func (r *redisServer) stop() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// redisHung measures a gateway whose shared state is in Redis (on_failure: open): with Redis
// answering, then with Redis stopped by SIGSTOP (connections open, no answer). The request
// that opens the breaker waits for the timeout; the ones after it are measured, against the
// proxy at the same rate. Skipped, with a note, without redis-server on PATH.
func (b *bench) redisHung(ctx context.Context, rep *report) error {
	dir, err := os.MkdirTemp("", "sluicebench-redis-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rs, err := startRedis(dir)
	if err != nil {
		rep.notes = append(rep.notes, "redis-hung: skipped: "+err.Error())
		return nil
	}
	defer rs.stop()
	url := "unix://" + rs.socket
	var gw *proc
	if b.o.inproc {
		gw, err = inProcess(ctx, "gateway", b.c.mock.url, url)
	} else {
		gw, err = spawn("gateway", b.c.mock.url, url, b.dir, "", b.pin)
	}
	if err != nil {
		return err
	}
	defer gw.stop()
	rate := redisRate * b.o.rateScale
	gwCall, pCall := chatCall(gw, script, false), chatCall(b.c.proxy, script, false)
	warm := min(b.o.duration/5, time.Second)
	b.load.openLoop(ctx, pCall, rate, warm)
	b.load.openLoop(ctx, gwCall, rate, warm)
	proxy := b.load.openLoop(ctx, pCall, rate, b.o.duration)
	up := b.load.openLoop(ctx, gwCall, rate, b.o.duration)
	if err := rs.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	opening := b.load.do(ctx, gwCall, time.Now(), nil)
	hung := b.load.openLoop(ctx, gwCall, rate, b.o.duration)
	if err := rs.signal(syscall.SIGCONT); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		r    result
	}{{"proxy", proxy}, {"gateway, Redis answering", up}, {"gateway, Redis hung", hung}} {
		if len(r.r.samples) == 0 {
			return fmt.Errorf("%s: every request failed (%d): %v", r.name, r.r.errs, r.r.firstErr)
		}
	}
	answering := fmt.Sprintf("non-streamed %g/s, Redis answering", rate)
	rep.runs(answering, trio{proxy: proxy, gw: up})
	rep.ratio(answering, "p50", proxy.quantile(0.5, false), up.quantile(0.5, false), 0)
	rep.ratio(answering, "p99", proxy.quantile(0.99, false), up.quantile(0.99, false), 0)
	name := fmt.Sprintf("non-streamed %g/s, Redis hung (SIGSTOP), on_failure: open", rate)
	rep.runs(name, trio{proxy: proxy, gw: hung})
	rep.ratio(name, "p50", proxy.quantile(0.5, false), hung.quantile(0.5, false), 0)
	p99 := hung.quantile(0.99, false)
	rep.ratio(name, "p99", proxy.quantile(0.99, false), p99, 0)
	last := &rep.rows[len(rep.rows)-1]
	last.target, last.holds = fmt.Sprintf("gateway < %v (redis.timeout)", redisTimeout), yesNo(p99 < redisTimeout)
	rep.notes = append(rep.notes, fmt.Sprintf("Redis hung: the request that opened the breaker took %.0f ms "+
		"(one redis.timeout, %v); the rows are the requests after it, while the breaker fails Redis calls at once "+
		"and a probe asks Redis once a second.", ms(opening.total), redisTimeout))
	return nil
}
