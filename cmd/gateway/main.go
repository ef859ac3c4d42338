// Command gateway runs the Sluice LLM gateway: an OpenAI-compatible proxy with fallback
// chains and streaming redaction. `gateway --config FILE` (or SLUICE_CONFIG); with neither, the
// embedded default serves the built-in simulated provider on 127.0.0.1:8080.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/server"
)

func main() {
	path := flag.String("config", os.Getenv("SLUICE_CONFIG"), "configuration file (default: the embedded default)")
	grace := flag.Duration("grace", 30*time.Second, "how long open streams may finish after SIGTERM")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *path, *grace); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string, grace time.Duration) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var cfg *config.Config
	if path == "" {
		cfg = config.Default()
	} else {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return err
		}
	}
	if err := cfg.CheckListen(); err != nil {
		return err
	}
	srv, err := server.FromConfig(cfg, log)
	if err != nil {
		return err
	}
	defer srv.Close() // after Shutdown: open streams may still reach Redis until then
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	// No WriteTimeout: it would cut every stream longer than it (DESIGN §10).
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("listening", "addr", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Fail /readyz at once, stop accepting, let open streams finish up to the grace period,
	// then cut the rest. A frontend run this process cannot finish ends through its owner
	// lease on another replica's readers (DESIGN §8).
	srv.Drain()
	log.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
