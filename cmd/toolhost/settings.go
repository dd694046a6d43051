package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/supervisor"
)

// A setting is one operator setting: a flag of every command that uses
// it, an environment variable and a key of the config file, all three
// named here once. A value comes from the first of: the flag, the
// environment variable, the config file, the default (docs/configuration.md).
//
// Flags that are not settings are a command's arguments for one run
// (--input, --user, --since…): they have neither an environment variable
// nor a config key, and arguments lists them.
type setting struct {
	// Name is the flag's name and the config file's key.
	Name string
	// Env is the environment variable.
	Env string
	// Value names the value in the help ("DIR", "DURATION").
	Value string
	// Default is the value when no source gives one, as a flag would
	// parse it.
	Default string
	// Help says what the setting does.
	Help string
	// List marks a repeatable setting: the flag may be given more than
	// once, the variable and a config string are comma-separated, a config
	// value may be an array.
	List bool
}

// configSetting is the --config setting, the one that is not a config key.
const configSetting = "config"

// settings is every operator setting, in the order the help lists them.
var settings = []setting{
	{Name: configSetting, Env: "TOOLHOST_CONFIG", Value: "FILE",
		Help: "a TOML file of settings, keyed by flag name; a flag or an environment variable overrides it"},
	{Name: "addr", Env: "TOOLHOST_ADDR", Value: "ADDR", Default: ":8080",
		Help: "the address to listen on"},
	{Name: "metrics-addr", Env: "TOOLHOST_METRICS_ADDR", Value: "ADDR",
		Help: "an address of its own to serve /metrics on (then not on --addr); empty serves it on --addr"},
	{Name: "tools-dir", Env: "TOOLHOST_TOOLS_DIR", Value: "DIR", Default: "wasm",
		Help: "the drop-in folder of tool modules"},
	{Name: "data-dir", Env: dataDirEnv, Value: "DIR", Default: "data",
		Help: "the data folder, holding " + databaseFile},
	{Name: "store", Env: "TOOLHOST_STORE", Value: "postgres://…",
		Help: "the database of accounts, jobs and the abuse log: a PostgreSQL URL that replicas share (docs/store.md); empty for the SQLite file " + databaseFile + " in the data folder"},
	{Name: "job-rescue-after", Env: "TOOLHOST_JOB_RESCUE_AFTER", Value: "DURATION",
		Help: "with a PostgreSQL --store: how long a job may be running before River hands it out again, so another replica settles the job of one that died; 0 for the default (2m; SQLite: 168h)"},
	{Name: "job-lease", Env: "TOOLHOST_JOB_LEASE", Value: "DURATION",
		Help: "with a PostgreSQL --store: how long a running job's lease lasts from its last renewal (every third of it); shorter than --job-rescue-after; 0 for the default (30s)"},
	{Name: "job-event-poll", Env: "TOOLHOST_JOB_EVENT_POLL", Value: "DURATION",
		Help: "how often the jobs followed by an event stream or a run's wait are read again, the safety net for a lost event (other replicas' events come by PostgreSQL NOTIFY); 0 for the default (5s)"},
	{Name: "files-dir", Env: "TOOLHOST_FILES_DIR", Value: "DIR",
		Help: "the folder of the job files; with a PostgreSQL --store, a volume every replica mounts (docs/scale-out.md); empty for the data folder's jobs/"},
	{Name: "cache-dir", Env: "TOOLHOST_CACHE_DIR", Value: "DIR", Default: defaultCacheDir(),
		Help: "where compiled modules and their images are cached (shared by every command and server using it); empty for no cache"},
	{Name: "cache-max-bytes", Env: "TOOLHOST_CACHE_MAX_BYTES", Value: "SIZE", Default: "1GiB",
		Help: "the cache folder's bound: past it the least recently used compiled modules and images are removed; bytes, or with a unit (500MB, 2GiB); 0 for no bound"},
	{Name: "interpreter-memory", Env: "TOOLHOST_INTERPRETER_MEMORY", Value: "SIZE", Default: "128MiB",
		Help: "on a cold cache, how much memory the modules served from wazero's interpreter while their optimised compile runs may hold at once (estimated, docs/host.md \"Tiered start\"); a module that does not fit is published once compiled; 0 serves none from the interpreter"},
	{Name: "log-format", Env: "TOOLHOST_LOG_FORMAT", Value: "text|json", Default: "text",
		Help: "the log's format"},
	{Name: "log-level", Env: "TOOLHOST_LOG_LEVEL", Value: "debug|info|warn|error", Default: "info",
		Help: "the least level the log keeps; also the level WASM tools read (Extism get_log_level), whose log calls below it are dropped"},
	{Name: "guard", Env: "TOOLHOST_GUARD", Value: "report|enforce", Default: "report",
		Help: "whether the guard refuses over quota and concurrency, or only logs what it would refuse"},
	{Name: "trusted-proxy", Env: "TOOLHOST_TRUSTED_PROXY", Value: "CIDR", List: true,
		Help: "a proxy whose X-Forwarded-For is believed; repeatable or comma-separated"},
	{Name: "quota-table", Env: "TOOLHOST_QUOTA_TABLE", Value: "FILE",
		Help: "a JSON quota table overlaying the defaults"},
	{Name: "probe-allow", Env: "TOOLHOST_PROBE_ALLOW", Value: "CIDRS",
		Help: "addresses the network probes may reach although they are in a refused range: comma-separated CIDRs or addresses (docs/egress.md)"},
	{Name: "deprecation", Env: "TOOLHOST_DEPRECATION", Value: "true|rfc9745|@SECONDS|DATE", Default: "true",
		Help: "the legacy routes' Deprecation field: ADR-027's true, or RFC 9745's @<unix seconds> (rfc9745 is the ADR's date, 2026-09-23; a date or RFC 3339 time is written in that form)"},
	{Name: "session-cookie", Env: "TOOLHOST_SESSION_COOKIE", Value: "NAME", Default: "ov_tools_jobs",
		Help: "the browser session cookie the server reads and issues (ADR-027's ov_tools_jobs)"},
	{Name: "cors-origin", Env: "TOOLHOST_CORS_ORIGIN", Value: "ORIGIN", List: true,
		Help: "an origin (scheme://host[:port]) whose pages may use the open API from a browser, with credentials; * for any origin, without credentials; repeatable or comma-separated; none sends no CORS headers"},
	{Name: "spare-workers", Env: "TOOLHOST_SPARE_WORKERS", Value: "N", Default: strconv.Itoa(supervisor.DefaultSpares),
		Help: "how many native workers are kept started ahead of their item (docs/supervisor.md); 0 starts each item's worker when the item comes"},
	{Name: "shutdown-timeout", Env: "TOOLHOST_SHUTDOWN_TIMEOUT", Value: "DURATION", Default: "1m0s",
		Help: "how long shutdown may take in all: requests in flight get it less the cleanup budget (5 s), then what is left is cancelled"},
	{Name: "drain-delay", Env: "TOOLHOST_DRAIN_DELAY", Value: "DURATION", Default: server.DefaultDrainDelay.String(),
		Help: "how long the listener stays open after /readyz turned 503 at shutdown, for a load balancer to notice; 0 closes it at once"},
	{Name: "redis", Env: "TOOLHOST_REDIS", Value: "URL",
		Help: "the Redis the replicas share their quotas, throttles, concurrency slots and abuse salt through (docs/scale-out.md): redis://[user:password@]HOST:6379/DB (rediss:// with TLS), redis-sentinel://SENTINEL:26379/DB?master_name=NAME[&addr=SENTINEL2:26379…] or redis-cluster://NODE:6379[?addr=NODE2:6379…]; empty keeps them in the process"},
}

// arguments are the flags that are not settings: what one run of a
// command acts on.
var arguments = []string{"input", "out", "operation", "user", "app", "sandbox", "capability", "since", "dir", "guest-replace", "owner", "state", "limit", "json", "redis-prefix"}

// lookupSetting returns the setting named name.
func lookupSetting(name string) (setting, bool) {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.Name == name })
	if i < 0 {
		return setting{}, false
	}
	return settings[i], true
}

// commandSettings is each command's settings, as its flag set registers
// them (TestSettingsTable checks the two agree).
var commandSettings = map[string][]string{
	"serve": {"config", "addr", "metrics-addr", "tools-dir", "data-dir", "store", "job-rescue-after", "job-lease", "job-event-poll", "files-dir", "cache-dir", "cache-max-bytes", "interpreter-memory", "log-format", "log-level", "guard",
		"trusted-proxy", "quota-table", "probe-allow", "deprecation", "session-cookie", "cors-origin", "spare-workers", "shutdown-timeout", "drain-delay", "redis"},
	"run":    {"config", "tools-dir", "cache-dir", "cache-max-bytes", "probe-allow"},
	"list":   {"config", "tools-dir", "cache-dir", "cache-max-bytes", "probe-allow"},
	"export": {"config", "tools-dir", "cache-dir", "cache-max-bytes", "probe-allow"},
	"check":  {"config", "cache-dir", "cache-max-bytes"},
	"token":  {"config", "data-dir", "store"},
	"user":   {"config", "data-dir", "store"},
	"app":    {"config", "data-dir", "store"},
	"abuse":  {"config", "data-dir", "store"},
	"guard":  {"config", "redis", "quota-table"},
	"jobs":   {"config", "data-dir", "store", "files-dir", "redis"},
}

// options registers a command's settings on its flag set and, once the
// command line is parsed, fills in those the command line left out from
// the environment and the config file.
type options struct {
	fs   *flag.FlagSet
	used []setting
	// config is --config's value.
	config string
}

// newOptions returns the options of fs, with --config registered.
func newOptions(fs *flag.FlagSet) *options {
	o := &options{fs: fs}
	o.register(configSetting, &stringValue{p: &o.config})
	return o
}

func (o *options) register(name string, v flag.Value) {
	s, ok := lookupSetting(name)
	if !ok {
		panic("toolhost: no setting " + name)
	}
	if s.Default != "" {
		if err := v.Set(s.Default); err != nil {
			panic("toolhost: setting " + name + ": bad default: " + err.Error())
		}
	}
	o.used = append(o.used, s)
	o.fs.Var(v, name, s.Help)
}

// String registers the string setting name.
func (o *options) String(name string) *string {
	p := new(string)
	o.register(name, &stringValue{p: p})
	return p
}

// Duration registers the duration setting name.
func (o *options) Duration(name string) *time.Duration {
	p := new(time.Duration)
	o.register(name, &durationValue{p: p})
	return p
}

// Int registers the integer setting name.
func (o *options) Int(name string) *int {
	p := new(int)
	o.register(name, &intValue{p: p})
	return p
}

// Bytes registers the byte-size setting name.
func (o *options) Bytes(name string) *int64 {
	p := new(int64)
	o.register(name, &bytesValue{p: p})
	return p
}

// Prefixes registers the repeatable CIDR setting name.
func (o *options) Prefixes(name string) *prefixesValue {
	v := &prefixesValue{}
	o.register(name, v)
	return v
}

// parse parses args (flags may follow positional arguments when
// positional is true, which then returns them), then sets each setting
// the command line did not from its environment variable or the config
// file. An unknown config key, a value that does not parse in any source,
// or a config file that cannot be read is a usage error naming it.
func (o *options) parse(args []string, positional bool) ([]string, error) {
	var rest []string
	if positional {
		var err error
		if rest, err = parseWithPositional(o.fs, args); err != nil {
			return nil, err
		}
	} else {
		if err := parseFlags(o.fs, args); err != nil {
			return nil, err
		}
		rest = o.fs.Args()
	}
	given := map[string]bool{}
	o.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given[configSetting] {
		o.config = os.Getenv(lookupEnv(configSetting))
	}
	var file map[string]any
	if o.config != "" {
		var err error
		if file, err = readConfig(o.config); err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	for _, s := range o.used {
		if given[s.Name] || s.Name == configSetting {
			continue
		}
		if v := os.Getenv(s.Env); v != "" {
			if err := o.fs.Set(s.Name, v); err != nil {
				return nil, fmt.Errorf("%w: $%s: %v", errUsage, s.Env, err)
			}
			continue
		}
		v, ok := file[s.Name]
		if !ok {
			continue
		}
		values, err := configValues(s, v)
		if err == nil {
			for _, text := range values {
				if err = o.fs.Set(s.Name, text); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: config %s: key %q: %v", errUsage, o.config, s.Name, err)
		}
	}
	return rest, nil
}

// lookupEnv returns the environment variable of the setting name.
func lookupEnv(name string) string {
	s, _ := lookupSetting(name)
	return s.Env
}

// printFlags writes every flag of fs, sorted by name: a setting with its
// environment variable, config key and default, an argument with its
// default.
func printFlags(b *strings.Builder, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if s, ok := lookupSetting(f.Name); ok {
			fmt.Fprintf(b, "  --%s %s\n        %s\n        %s\n", s.Name, s.Value, s.Help, sources(s))
			return
		}
		name, help := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + strings.ToUpper(name)
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(b, "  --%s%s\n        %s%s\n", f.Name, name, help, def)
	})
}

// sources is the help's line of where a setting comes from.
func sources(s setting) string {
	key := "config key " + s.Name
	if s.Name == configSetting {
		key = "not a config key"
	}
	def := "default none"
	if s.Default != "" {
		def = fmt.Sprintf("default %q", s.Default)
	}
	return fmt.Sprintf("env $%s, %s, %s", s.Env, key, def)
}

// printSettings writes every setting, with the commands that take it: the
// tail of `toolhost help`.
func printSettings(b *strings.Builder) {
	b.WriteString("\nsettings (a flag, else its environment variable, else the --config file's key, else the default):\n")
	for _, s := range settings {
		var cmds []string
		for _, c := range slices.Sorted(mapKeys(commandSettings)) {
			if slices.Contains(commandSettings[c], s.Name) {
				cmds = append(cmds, c)
			}
		}
		fmt.Fprintf(b, "  --%s %s\n        %s\n        %s; taken by %s\n", s.Name, s.Value, s.Help, sources(s), strings.Join(cmds, ", "))
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The flag values of the settings.

type stringValue struct{ p *string }

func (v *stringValue) Set(s string) error { *v.p = s; return nil }
func (v *stringValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

type durationValue struct{ p *time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (90s, 1m30s)", s)
	}
	*v.p = d
	return nil
}
func (v *durationValue) String() string {
	if v.p == nil {
		return ""
	}
	return v.p.String()
}

type intValue struct{ p *int }

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*v.p = n
	return nil
}
func (v *intValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.Itoa(*v.p)
}

type bytesValue struct{ p *int64 }

func (v *bytesValue) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
func (v *bytesValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatInt(*v.p, 10)
}

// byteUnits are the units parseBytes knows, longest first.
var byteUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// parseBytes reads a size: a whole number of bytes, or a number with a
// unit (KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB — or K, M,
// G, T — in powers of 1024).
func parseBytes(s string) (int64, error) {
	text := strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(text, u.suffix); ok {
			text, factor = strings.TrimSpace(n), u.factor
			break
		}
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || n < 0 || n*float64(factor) > 1<<62 || text == "" {
		return 0, fmt.Errorf("%q is not a size (1073741824, 500MB, 2GiB)", s)
	}
	return int64(n * float64(factor)), nil
}

// prefixesValue is a repeatable list of CIDRs (or addresses).
type prefixesValue struct{ list []string }

func (v *prefixesValue) Set(s string) error {
	p, err := guard.ParsePrefixes(s)
	if err != nil {
		return err
	}
	for _, x := range p {
		v.list = append(v.list, x.String())
	}
	return nil
}
func (v *prefixesValue) String() string {
	if v == nil {
		return ""
	}
	return strings.Join(v.list, ",")
}

// originsValue is a repeatable list of CORS origins (api.ParseOrigin).
type originsValue struct{ list []string }

func (v *originsValue) Set(s string) error {
	for _, o := range strings.Split(s, ",") {
		if strings.TrimSpace(o) == "" {
			continue
		}
		origin, err := api.ParseOrigin(o)
		if err != nil {
			return err
		}
		v.list = append(v.list, origin)
	}
	return nil
}

func (v *originsValue) String() string {
	if v == nil {
		return ""
	}
	return strings.Join(v.list, ",")
}

// Origins registers the repeatable CORS origin setting name.
func (o *options) Origins(name string) *originsValue {
	v := &originsValue{}
	o.register(name, v)
	return v
}

// errNotScalar is returned for a config value of a type no flag parses.
var errNotScalar = errors.New("the value is not a string, a number or a boolean")
