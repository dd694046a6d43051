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
	"os/signal"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/supervisor"
)

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
	o := newOptions(fs)
	var data dataFlags
	data.register(o)
	var tf toolFlags
	tf.register(o)
	addr := o.String("addr")
	metricsAddr := o.String("metrics-addr")
	logFormat := o.String("log-format")
	logLevel := o.String("log-level")
	guardMode := o.String("guard")
	trusted := o.Prefixes("trusted-proxy")
	quotaFile := o.String("quota-table")
	spares := o.Int("spare-workers")
	shutdown := o.Duration("shutdown-timeout")
	drainDelay := o.Duration("drain-delay")
	deprecationSetting := o.String("deprecation")
	sessionCookie := o.String("session-cookie")
	corsOrigins := o.Origins("cors-origin")
	rescueAfter := o.Duration("job-rescue-after")
	jobLease := o.Duration("job-lease")
	eventPoll := o.Duration("job-event-poll")
	filesDir := o.String("files-dir")
	redisURL := o.String("redis")
	interpreterMemory := o.Bytes("interpreter-memory")
	rest, err := o.parse(args, false)
	if err != nil {
		return usageOr(err, fmt.Errorf("%w: %v", errUsage, err))
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: serve takes no arguments", errUsage)
	}
	if *rescueAfter < 0 || *jobLease < 0 || *eventPoll < 0 {
		return fmt.Errorf("%w: --job-rescue-after, --job-lease and --job-event-poll are not negative", errUsage)
	}
	if *drainDelay < 0 {
		return fmt.Errorf("%w: --drain-delay is negative", errUsage)
	}
	if *spares < 0 {
		return fmt.Errorf("%w: --spare-workers is negative", errUsage)
	}
	deprecation, err := api.ParseDeprecation(*deprecationSetting)
	if err != nil {
		return fmt.Errorf("%w: --deprecation: %v", errUsage, err)
	}
	if c := (&http.Cookie{Name: *sessionCookie, Value: "x"}); *sessionCookie == "" || c.Valid() != nil {
		return fmt.Errorf("%w: --session-cookie %q is not a cookie name", errUsage, *sessionCookie)
	}
	mode, err := guard.ParseMode(*guardMode)
	if err != nil {
		return fmt.Errorf("%w: --guard: %v", errUsage, err)
	}
	var prefixes []netip.Prefix
	for _, p := range trusted.list {
		prefixes = append(prefixes, netip.MustParsePrefix(p))
	}
	gc := server.GuardConfig{Mode: mode, Trusted: prefixes}
	if *quotaFile != "" {
		t, err := guard.LoadTable(*quotaFile)
		if err != nil {
			return fmt.Errorf("%w: --quota-table: %v", errUsage, err)
		}
		gc.Quotas = &t
	}
	var level slog.Level
	switch *logLevel {
	case "debug", "info", "warn", "error":
		if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
			return fmt.Errorf("%w: --log-level: %v", errUsage, err) // slog knows the four
		}
	default:
		return fmt.Errorf("%w: --log-level is debug, info, warn or error", errUsage)
	}
	var handler slog.Handler
	switch hopts := (&slog.HandlerOptions{Level: level}); *logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, hopts)
	case "json":
		handler = slog.NewJSONHandler(stderr, hopts)
	default:
		return fmt.Errorf("%w: --log-format is text or json", errUsage)
	}
	log := slog.New(handler)
	log.Info("guard", "mode", mode.String(), "trusted_proxies", len(prefixes), "shared", *redisURL != "")
	bound, err := tf.bound(log)
	if err != nil {
		return err
	}
	defer closeLogging(log, "the cache folder's bound", bound.Close)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv, err := server.New(ctx, server.Config{
		ToolsDir: tf.toolsDir, DataDir: data.dataDir, CacheDir: tf.cacheDir, Logger: log,
		Natives: engines.Packages(), Supervisor: supervisor.Config{Spares: *spares}, Version: version(),
		Guard: gc, ProbeAllow: tf.probeAllow, DrainDelay: *drainDelay, LogLevel: level,
		Deprecation: deprecation, SessionCookie: *sessionCookie, CORSOrigins: corsOrigins.list,
		MetricsElsewhere: *metricsAddr != "",
		Store:            data.store,
		Jobs:             server.JobsConfig{RescueAfter: *rescueAfter, LeaseTTL: *jobLease, EventPoll: *eventPoll, FilesDir: *filesDir},
		Redis:            *redisURL,
		Loading:          loading(*interpreterMemory),
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return errors.Join(err, srv.Shutdown(context.Background()))
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	if *metricsAddr != "" {
		ml, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			// srv.Serve closes l once srv is shut down.
			return errors.Join(fmt.Errorf("--metrics-addr: %w", err), srv.Shutdown(context.Background()))
		}
		ms := &http.Server{Handler: srv.MetricsHandler(), ReadHeaderTimeout: metricsHeaderTimeout}
		log.Info("serving metrics", "addr", ml.Addr().String())
		go func() {
			if err := ms.Serve(ml); !errors.Is(err, http.ErrServerClosed) {
				log.Error("serving metrics", "error", err)
			}
		}()
		defer closeLogging(log, "the metrics server", ms.Close)
	}
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

// metricsHeaderTimeout bounds a scrape's request header on the
// --metrics-addr listener.
const metricsHeaderTimeout = 10 * time.Second

// loading is serve's LoadingConfig: modules are published as they load,
// with at most interpreterMemory bytes of them on the interpreter at once
// (--interpreter-memory; 0 turns the tiered start off).
func loading(interpreterMemory int64) server.LoadingConfig {
	if interpreterMemory == 0 {
		return server.LoadingConfig{Background: true, Untiered: true}
	}
	return server.LoadingConfig{Background: true, InterpretedBytes: interpreterMemory}
}
