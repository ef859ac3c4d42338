// Command gateway runs the Sluice LLM gateway: an OpenAI-compatible proxy with fallback
// chains and streaming redaction. `gateway --config FILE` (or SLUICE_CONFIG); with neither, the
// embedded default serves the built-in simulated provider on 127.0.0.1:8080. `gateway version`
// (or --version) says which build it is: version, commit, modified tree, commit date, Go.
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
	"github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/gcfloor"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

func main() {
	path := flag.String("config", os.Getenv("SLUICE_CONFIG"), "configuration file (default: the embedded default)")
	grace := flag.Duration("grace", 30*time.Second, "how long open streams may finish after SIGTERM")
	check := flag.String("check", "", "GET `url` and exit 0 when it answers 200 (a container health check: distroless has no curl)")
	version := flag.Bool("version", false, "print the build (version, commit, modified tree, commit date, Go) and exit")
	flag.Parse()
	switch {
	case *version || flag.Arg(0) == "version" && flag.NArg() == 1:
		fmt.Print(telemetry.ReadBuild())
		return
	case flag.NArg() > 0:
		fmt.Fprintf(os.Stderr, "gateway: unknown command %q (the only command is version; -h lists the flags)\n", flag.Arg(0))
		os.Exit(2)
	}
	if *check != "" {
		if err := healthy(*check); err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *path, *grace); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string, grace time.Duration) error {
	// JSON lines, or text on a terminal; SLUICE_LOG_FORMAT=json|text chooses. With
	// SLUICE_LOG_FLUSH set, off a terminal, the lines are written together at that interval.
	flush, flushErr := telemetry.LogFlushEnv(os.Getenv)
	log, closeLog := telemetry.NewLogger(os.Stderr, os.Getenv("SLUICE_LOG_FORMAT"), flush)
	defer closeLog()
	if flushErr != nil {
		log.Warn("log flush", "error", flushErr)
	}
	// The collector waits for a heap of SLUICE_GC_FLOOR (64 MiB) before it runs, unless
	// GOGC is set (issue 51: a tenth of the CPU of plain requests went to collections).
	floor, err := gcfloor.Env(os.Getenv)
	if err != nil {
		log.Warn("gc floor", "error", err)
	}
	defer gcfloor.Start(floor, nil).Stop()
	var cfg *config.Config
	if path == "" {
		cfg = config.Default()
	} else {
		if cfg, err = config.Load(path); err != nil {
			return err
		}
	}
	if err := cfg.CheckListen(); err != nil {
		return err
	}
	// The OpenTelemetry SDK, from the telemetry: block and OTEL_*: Prometheus, and OTLP when
	// an endpoint is set (none in the embedded default: nothing reaches out to a network).
	log.Info("starting", "version", telemetry.ReadBuild().Version, "commit", telemetry.ReadBuild().Commit)
	sdk, err := telemetry.Setup(ctx, telemetry.Config{Prometheus: cfg.Telemetry.Prometheus,
		OTLPEndpoint: cfg.Telemetry.OTLPEndpoint, OTLPProtocol: cfg.Telemetry.OTLPProtocol, Log: log})
	if err != nil {
		return err
	}
	defer func() { // last: what the shutdown itself recorded is flushed too
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sdk.Shutdown(sctx)
	}()
	srv, err := gateway.New(cfg, log)
	if err != nil {
		return err
	}
	defer srv.Close() // after Shutdown: open streams may still reach Redis until then
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	// No WriteTimeout: it would cut every stream longer than it (DESIGN §10).
	// ConnContext: a client that half-closes its connection still gets its answer.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn), ConnContext: server.ConnContext}
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

// healthy GETs url, for --check.
func healthy(url string) error {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
