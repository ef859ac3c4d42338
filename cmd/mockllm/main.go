// Command mockllm serves the scripted upstream of package internal/mockllm (OpenAI Chat
// Completions, Anthropic Messages, OpenAI Responses, embeddings) on a TCP address, for the
// demo, benchmarks and manual tests. The request's model name is the script; see README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

type config struct {
	addr     string
	fixtures string
	quiet    bool
	out      io.Writer // where the listening address is printed
}

func main() {
	cfg := config{out: os.Stdout}
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:9000", "listen address")
	flag.StringVar(&cfg.fixtures, "fixtures", "", "directory of .sse files for replay scripts")
	flag.BoolVar(&cfg.quiet, "quiet", false, "do not log requests")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "mockllm:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then stops gracefully: request contexts derive from ctx, so
// stalled and delayed streams end at once instead of holding the shutdown.
func run(ctx context.Context, cfg config) error {
	opts := mockllm.Options{FixturesDir: cfg.fixtures}
	if !cfg.quiet {
		opts.Logf = log.Printf
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           mockllm.New(opts),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(cfg.out, "mockllm listening on http://%s/v1\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return errors.Join(err, serr)
	}
	return err
}
