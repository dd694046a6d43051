package registry

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
)

// The defaults of a Config.
const (
	// DefaultInterval is how often the tools folder is rescanned when no
	// event arrives: the safety net for events the watcher missed.
	DefaultInterval = 2 * time.Second
	// DefaultSettle is how long a module's size and modification time must
	// stay unchanged before it is read.
	DefaultSettle = time.Second
	// DefaultBatchWait is how long a rescan of the live folder waits for
	// the loads it started before publishing what is ready.
	DefaultBatchWait = time.Second
)

var (
	// ErrConfig is returned by Open when its Config is unusable; the error
	// names the field.
	ErrConfig = errors.New("registry: invalid configuration")
	// ErrClosed is returned when a closed Registry is asked to reload.
	ErrClosed = errors.New("registry: closed")
)

// Config configures a Registry. Open validates it once; the Registry keeps
// a copy.
type Config struct {
	// Dir is the tools folder: every NAME.wasm directly inside it (not in
	// subfolders, not starting with a dot) is a package, with its sidecar
	// manifest NAME.tool.json when there is one. Empty means no folder:
	// only the builtins are published.
	Dir string
	// Loader loads the folder's modules (*wasmtool.Loader in the server).
	// Required when Dir is set. It clamps WASM operations to its own
	// platform policy, which must be Platform.
	Loader Loader
	// Platform is the platform policy the builtins' operations are
	// clamped to. It must be coherent.
	Platform policy.Platform
	// Builtins are the packages compiled into the binary. Their names are
	// distinct.
	Builtins []Builtin
	// Interval is the period of the folder's rescans. Default
	// [DefaultInterval].
	Interval time.Duration
	// Settle is how long a module file (and its sidecar) must keep its size
	// and modification time before it is read, so that a write in progress
	// is not loaded half-done. A file whose modification time is already
	// Settle in the past is read at once. Default [DefaultSettle].
	Settle time.Duration
	// BatchWait is how long a rescan of the live folder waits for the
	// loads it started before publishing what is ready, so that files
	// dropped together make one generation; a load still running then is
	// published on its own when it ends, so that a slow module delays only
	// itself. Default [DefaultBatchWait].
	BatchWait time.Duration
	// LoadWait bounds how long Open and Reload wait for loads before
	// publishing what is ready; the loads still running are published
	// when they end. Zero waits for every load, each of which ends by its
	// phase deadlines (the Loader's) or, when its work cannot be
	// interrupted, is abandoned at them.
	LoadWait time.Duration
	// Static turns the live folder off: no watcher and no periodic
	// rescan; only Reload rescans. For one-shot commands.
	Static bool
	// Logger receives the operator's log: every refusal with its full
	// cause, every publication. Default slog.Default().
	Logger *slog.Logger
	// PromotionsIdle, when set, is called whenever the last running
	// promotion of a module to its compiled tier ends (docs/registry.md,
	// "Tiered start"), on that promotion's goroutine: a compile frees
	// hundreds of megabytes, which the server hands back to the
	// operating system then.
	PromotionsIdle func()
}

// Builtin is a package compiled into the binary: a declaration in the same
// JSON shape as a module's describe output (docs/guest-abi.md, decoded with
// tooldef.Decode) and the Runner of its services.
type Builtin struct {
	// Name names the package in sources and failures: "builtin/<Name>".
	// It matches [a-z][a-z0-9_]*, at most 64 bytes.
	Name string
	// Declaration is the package declaration.
	Declaration []byte
	// Runner runs the items of every service of the package. The registry
	// never closes it.
	Runner engine.Runner
	// MissingEngines names the executables the package needs that the host
	// lacks. Its services are then published unavailable (tool_unavailable,
	// one engine_missing issue per engine): listed and refused, never run.
	MissingEngines []string
}

var builtinName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// withDefaults validates c and fills its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Dir != "" && c.Loader == nil {
		return c, fmt.Errorf("%w: Loader is required with a tools folder", ErrConfig)
	}
	if err := c.Platform.Validate(); err != nil {
		return c, fmt.Errorf("%w: Platform: %w", ErrConfig, err)
	}
	switch {
	case c.Interval < 0:
		return c, fmt.Errorf("%w: Interval is negative", ErrConfig)
	case c.Interval == 0:
		c.Interval = DefaultInterval
	}
	switch {
	case c.Settle < 0:
		return c, fmt.Errorf("%w: Settle is negative", ErrConfig)
	case c.Settle == 0:
		c.Settle = DefaultSettle
	}
	switch {
	case c.BatchWait < 0:
		return c, fmt.Errorf("%w: BatchWait is negative", ErrConfig)
	case c.BatchWait == 0:
		c.BatchWait = DefaultBatchWait
	}
	if c.LoadWait < 0 {
		return c, fmt.Errorf("%w: LoadWait is negative", ErrConfig)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	seen := map[string]bool{}
	for i, b := range c.Builtins {
		switch {
		case !builtinName.MatchString(b.Name):
			return c, fmt.Errorf("%w: Builtins[%d]: name %q does not match [a-z][a-z0-9_]*", ErrConfig, i, b.Name)
		case seen[b.Name]:
			return c, fmt.Errorf("%w: Builtins[%d]: name %q is repeated", ErrConfig, i, b.Name)
		case b.Runner == nil:
			return c, fmt.Errorf("%w: Builtins[%d] (%s) has no Runner", ErrConfig, i, b.Name)
		}
		seen[b.Name] = true
	}
	return c, nil
}
