package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/supervisor"
)

// envOr returns the environment variable name's value, or def.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// runServe is `serve`: it listens as soon as the process is composed
// (modules still loading are published when ready), serves the API until
// SIGTERM or SIGINT, then drains — /readyz turns 503, the listener stays
// open for the drain delay so that a load balancer notices, requests in flight
// get the shutdown timeout less the cleanup reserve, the executor cancels
// and reaps what is left — and exits within the shutdown timeout whatever
// a load or an item is doing. A second signal during the drain ends the
// process at once (the default action).
func runServe(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var data dataFlags
	data.register(fs)
	addr := fs.String("addr", envOr("TOOLHOST_ADDR", ":8080"), "the address to listen on ($TOOLHOST_ADDR)")
	toolsDir := fs.String("tools-dir", envOr("TOOLHOST_TOOLS_DIR", "wasm"), "the drop-in folder of tool modules ($TOOLHOST_TOOLS_DIR)")
	cacheDir := fs.String("cache-dir", envOr("TOOLHOST_CACHE_DIR", defaultCacheDir()), "where compiled modules are cached ($TOOLHOST_CACHE_DIR)")
	logFormat := fs.String("log-format", envOr("TOOLHOST_LOG_FORMAT", "text"), "text or json ($TOOLHOST_LOG_FORMAT)")
	shutdown := fs.Duration("shutdown-timeout", 60*time.Second, "how long shutdown may take in all: requests in flight get it less the cleanup budget (5 s), then what is left is cancelled")
	drainDelay := fs.Duration("drain-delay", server.DefaultDrainDelay, "how long the listener stays open after /readyz turned 503 at shutdown, for a load balancer to notice; 0 closes it at once")
	spares := fs.Int("spare-workers", supervisor.DefaultSpares, "how many native workers are kept started ahead of their item, each serving one item and replaced after it (docs/supervisor.md); 0 starts each item's worker when the item comes")
	guardMode := fs.String("guard", envOr("TOOLHOST_GUARD", "report"), "report or enforce: whether the guard refuses or only logs ($TOOLHOST_GUARD)")
	var trusted []netip.Prefix
	addTrusted := func(v string) error {
		p, err := guard.ParsePrefixes(v)
		if err != nil {
			return err
		}
		trusted = append(trusted, p...)
		return nil
	}
	if v := os.Getenv("TOOLHOST_TRUSTED_PROXY"); v != "" {
		if err := addTrusted(v); err != nil {
			return fmt.Errorf("%w: $TOOLHOST_TRUSTED_PROXY: %v", errUsage, err)
		}
	}
	envTrusted := len(trusted)
	fs.Func("trusted-proxy", "a proxy CIDR whose X-Forwarded-For is believed; repeatable or comma-separated ($TOOLHOST_TRUSTED_PROXY)", func(v string) error {
		if envTrusted > 0 { // the flag replaces the environment
			trusted, envTrusted = trusted[:0], 0
		}
		return addTrusted(v)
	})
	quotaFile := fs.String("quota-table", envOr("TOOLHOST_QUOTA_TABLE", ""), "a JSON quota table overlaying the defaults ($TOOLHOST_QUOTA_TABLE)")
	if err := parseFlags(fs, args); err != nil {
		return usageOr(err, fmt.Errorf("%w: %v", errUsage, err))
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: serve takes no arguments", errUsage)
	}
	if *drainDelay < 0 {
		return fmt.Errorf("%w: --drain-delay is negative", errUsage)
	}
	if *spares < 0 {
		return fmt.Errorf("%w: --spare-workers is negative", errUsage)
	}
	mode, err := guard.ParseMode(*guardMode)
	if err != nil {
		return fmt.Errorf("%w: --guard: %v", errUsage, err)
	}
	gc := server.GuardConfig{Mode: mode, Trusted: trusted}
	if *quotaFile != "" {
		t, err := guard.LoadTable(*quotaFile)
		if err != nil {
			return fmt.Errorf("%w: --quota-table: %v", errUsage, err)
		}
		gc.Quotas = &t
	}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(stderr, nil)
	default:
		return fmt.Errorf("%w: --log-format is text or json", errUsage)
	}
	log := slog.New(handler)
	log.Info("guard", "mode", mode.String(), "trusted_proxies", len(trusted))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv, err := server.New(ctx, server.Config{
		ToolsDir: *toolsDir, DataDir: data.dataDir, CacheDir: *cacheDir, Logger: log,
		Natives: engines.Packages(), Supervisor: supervisor.Config{Spares: *spares}, Version: version(),
		Guard: gc, ProbeAllow: os.Getenv(netprobe.AllowEnv), DrainDelay: *drainDelay,
		Loading: server.LoadingConfig{Background: true},
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		srv.Shutdown(context.Background())
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err = <-served: // the listener failed
	case <-ctx.Done():
		log.Info("shutting down", "timeout", shutdown.String())
	}
	stop() // a second signal takes its default action
	sctx, cancel := context.WithTimeout(context.Background(), *shutdown)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		log.Error("shutdown incomplete", "err", serr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("stopped")
	return err
}
