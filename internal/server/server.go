// Package server composes one Toolhost process: the store and accounts,
// the WASM host and loader, the supervisor of native workers, the registry
// over the tools folder and the native packages, the executor and the HTTP
// API. cmd/toolhost's serve command is a thin shell
// around it, and end-to-end tests run it on loopback as it is.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"toolhost/host"
	"toolhost/internal/api"
	"toolhost/internal/auth"
	"toolhost/internal/engine"
	"toolhost/internal/executor"
	"toolhost/internal/native"
	"toolhost/internal/policy"
	"toolhost/internal/registry"
	"toolhost/internal/store"
	"toolhost/internal/supervisor"
	"toolhost/internal/wasmtool"
)

// DatabaseFile is the SQLite database's name in the data folder.
const DatabaseFile = "toolhost.db"

// Config configures a process. The zero value of every field but DataDir
// is a usable default.
type Config struct {
	// ToolsDir is the drop-in folder of tool modules; empty for none.
	ToolsDir string
	// DataDir holds the database (DatabaseFile). Required.
	DataDir string
	// CacheDir is where compiled modules are cached; empty for none.
	CacheDir string
	// Platform is the platform policy; zero means policy.DefaultPlatform().
	Platform policy.Platform
	// Rescan and Settle tune the live tools folder (registry.Config).
	Rescan, Settle time.Duration
	// Natives are the native tool packages compiled into the binary; they
	// run in worker processes of a supervisor configured by Supervisor
	// (its Logger is this Config's).
	Natives    []*native.Package
	Supervisor supervisor.Config
	// Version is the build's version, for the OpenAPI document.
	Version string
	Logger  *slog.Logger
}

// Server is a composed process. Create it with New, serve with Serve, stop
// with Shutdown.
type Server struct {
	cfg        Config
	log        *slog.Logger
	store      *store.Store
	accounts   *auth.Accounts
	runtime    *host.Runtime
	supervisor *supervisor.Supervisor
	registry   *registry.Registry
	executor   *executor.Executor
	api        *api.Server
	http       *http.Server
}

// New opens everything a process needs and runs the first discovery of
// the tools folder. On an error it closes what it opened.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.DataDir == "" {
		return nil, errors.New("server: DataDir is required")
	}
	if cfg.Platform == (policy.Platform{}) {
		cfg.Platform = policy.DefaultPlatform()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	defer func() {
		if err != nil {
			s.close(context.Background())
		}
	}()
	if s.store, err = store.Open(ctx, filepath.Join(cfg.DataDir, DatabaseFile)); err != nil {
		return nil, err
	}
	s.accounts = auth.New(s.store)
	if s.runtime, err = host.NewRuntime(ctx, host.Config{CacheDir: cfg.CacheDir}); err != nil {
		return nil, err
	}
	loader, err := wasmtool.NewLoader(s.runtime, wasmtool.Config{Platform: cfg.Platform})
	if err != nil {
		return nil, err
	}
	memoryMode := engine.MemoryUnavailable
	var builtins []registry.Builtin
	if len(cfg.Natives) > 0 {
		sc := cfg.Supervisor
		sc.Logger = cfg.Logger
		if s.supervisor, err = supervisor.New(sc); err != nil {
			return nil, err
		}
		memoryMode = s.supervisor.MemoryMode()
		for _, p := range cfg.Natives {
			builtins = append(builtins, registry.Builtin{
				Name: p.Name, Declaration: p.Declaration, Runner: s.supervisor.Runner(p),
				MissingEngines: p.MissingEngines(),
			})
		}
	}
	if s.registry, err = registry.Open(ctx, registry.Config{
		Dir: cfg.ToolsDir, Loader: loader, Platform: cfg.Platform, Builtins: builtins,
		Interval: cfg.Rescan, Settle: cfg.Settle, Logger: cfg.Logger,
	}); err != nil {
		return nil, err
	}
	if s.executor, err = executor.New(executor.Config{
		Platform: cfg.Platform, Snapshot: s.registry.Snapshot, Logger: cfg.Logger,
	}); err != nil {
		return nil, err
	}
	s.api = api.New(api.Config{
		Platform: cfg.Platform,
		Accounts: principals{s.accounts},
		Executor: s.executor,
		Snapshot: s.registry.Snapshot,
		Capabilities: api.Capabilities{
			Memory:     memoryMode,
			WASMMemory: engine.MemoryWASMHard,
		},
		RuntimeID: runtimeID(),
		Version:   cfg.Version,
		Logger:    cfg.Logger,
	})
	s.http = &http.Server{
		Handler:           s.api.Handler(),
		ReadHeaderTimeout: time.Duration(cfg.Platform.IngressTimeoutMS) * time.Millisecond,
		// A response may take the longest request budget plus its
		// reserve; the handler bounds itself, this only reaps stuck
		// connections.
		WriteTimeout: time.Duration(cfg.Platform.ClientTimeoutMS) * time.Millisecond,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Accounts returns the process's accounts, for the commands that manage
// them and for tests.
func (s *Server) Accounts() *auth.Accounts { return s.accounts }

// Registry returns the process's registry.
func (s *Server) Registry() *registry.Registry { return s.registry }

// Serve serves HTTP on l until Shutdown; it returns http.ErrServerClosed
// after a shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.log.Info("serving", "addr", l.Addr().String(), "tools_dir", s.cfg.ToolsDir,
		"services", len(s.registry.Snapshot().Services()))
	return s.http.Serve(l)
}

// Shutdown drains and stops the process: /readyz turns 503, the listener
// closes, requests in flight finish within ctx, the executor closes
// admission and waits for its items within its cleanup budget, then the
// registry, the runtime and the store close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.api.Drain()
	err := s.http.Shutdown(ctx)
	return errors.Join(err, s.close(ctx))
}

// close releases everything New opened, in reverse order.
func (s *Server) close(ctx context.Context) error {
	var errs []error
	// Past ctx (requests that outlived the drain), the executor and the
	// supervisor still get the cleanup budget to cancel and reap items.
	budget := time.Duration(s.cfg.Platform.CleanupTimeoutMS) * time.Millisecond
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	if s.executor != nil {
		errs = append(errs, s.executor.Shutdown(cctx))
	}
	if s.supervisor != nil {
		// Whatever the executor could not reap in its budget is killed
		// here, its subtree confirmed gone.
		errs = append(errs, s.supervisor.Close(cctx))
	}
	if s.registry != nil {
		errs = append(errs, s.registry.Close(ctx))
	}
	if s.runtime != nil {
		errs = append(errs, s.runtime.Close(ctx))
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}

// principals adapts the accounts to the API's boundary: the principal key
// is the account, so that every token of one account shares its limits.
type principals struct{ a *auth.Accounts }

func (p principals) Principal(ctx context.Context, token string) (string, error) {
	pr, err := p.a.Authenticate(ctx, token)
	if err != nil {
		return "", err
	}
	return "user:" + strconv.FormatInt(pr.UserID, 10), nil
}

// runtimeID is an opaque identifier of this process for diagnostics: random,
// so that it says nothing about the host.
func runtimeID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("server: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}
