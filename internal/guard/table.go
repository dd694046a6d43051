package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
)

// The quota classes with default allowances. A class names the work, never
// a tier or a price.
const (
	ClassRun   = "tools-run"
	ClassJob   = "tools-job"
	ClassSolve = "tools-solve"
	ClassFetch = "tools-fetch"
	ClassProbe = "tools-probe"
)

// CapabilityProbe is the capability network probe tools require.
const CapabilityProbe = "tools.net.probe"

// Allowance is one cell of the quota table: a token bucket of cost units
// and two concurrency limits. A zero Burst closes the class to the tier:
// every request is refused as [ReasonCostExceedsAllowance]. A zero
// concurrency limit means no limit.
type Allowance struct {
	// Burst is the bucket's size in cost units: the most a caller can
	// spend at once, and the largest cost that can ever be admitted.
	Burst int `json:"burst"`
	// PerMinute is the refill rate in cost units per minute; it must be
	// positive when Burst is.
	PerMinute int `json:"per_minute"`
	// ConcurrentPerCaller bounds the runs of the class one caller key has
	// in flight at once.
	ConcurrentPerCaller int `json:"concurrent_per_caller,omitempty"`
	// ConcurrentPerTier bounds the runs of the class all callers of the
	// tier together have in flight at once.
	ConcurrentPerTier int `json:"concurrent_per_tier,omitempty"`
}

// Class holds the allowances of one quota class, one per tier and one for
// sandbox app tokens.
type Class struct {
	Anonymous Allowance `json:"anonymous"`
	Session   Allowance `json:"session"`
	User      Allowance `json:"user"`
	App       Allowance `json:"app"`
	// Sandbox applies to app tokens flagged sandbox instead of App.
	Sandbox Allowance `json:"sandbox"`
}

// Table is the quota table: class × tier → allowance. A request whose
// class is not in Classes counts against DefaultClass. A Table is not
// modified by the guard; build a new Guard to change it.
type Table struct {
	// DefaultClass is used for a class the table does not name.
	DefaultClass string `json:"default_class"`
	// Classes by quota class name.
	Classes map[string]Class `json:"classes"`
}

// DefaultTable returns the built-in quota table (documented in
// docs/guard.md). The result is a fresh copy the caller may change.
func DefaultTable() Table {
	return Table{
		DefaultClass: ClassRun,
		Classes: map[string]Class{
			ClassRun: {
				Anonymous: Allowance{Burst: 60, PerMinute: 30, ConcurrentPerCaller: 4},
				Session:   Allowance{Burst: 120, PerMinute: 60, ConcurrentPerCaller: 8},
				User:      Allowance{Burst: 300, PerMinute: 150, ConcurrentPerCaller: 16},
				App:       Allowance{Burst: 600, PerMinute: 300, ConcurrentPerCaller: 32},
				Sandbox:   Allowance{Burst: 30, PerMinute: 10, ConcurrentPerCaller: 2},
			},
			ClassJob: {
				Anonymous: Allowance{Burst: 5, PerMinute: 1, ConcurrentPerCaller: 1, ConcurrentPerTier: 4},
				Session:   Allowance{Burst: 10, PerMinute: 2, ConcurrentPerCaller: 2, ConcurrentPerTier: 16},
				User:      Allowance{Burst: 30, PerMinute: 6, ConcurrentPerCaller: 4},
				App:       Allowance{Burst: 60, PerMinute: 12, ConcurrentPerCaller: 8},
				Sandbox:   Allowance{Burst: 3, PerMinute: 1, ConcurrentPerCaller: 1, ConcurrentPerTier: 4},
			},
			ClassSolve: {
				Anonymous: Allowance{Burst: 10, PerMinute: 2, ConcurrentPerCaller: 1, ConcurrentPerTier: 8},
				Session:   Allowance{Burst: 20, PerMinute: 5, ConcurrentPerCaller: 2, ConcurrentPerTier: 16},
				User:      Allowance{Burst: 60, PerMinute: 15, ConcurrentPerCaller: 4},
				App:       Allowance{Burst: 120, PerMinute: 30, ConcurrentPerCaller: 8},
				Sandbox:   Allowance{Burst: 5, PerMinute: 1, ConcurrentPerCaller: 1, ConcurrentPerTier: 4},
			},
			ClassFetch: {
				Anonymous: Allowance{Burst: 10, PerMinute: 5, ConcurrentPerCaller: 2, ConcurrentPerTier: 16},
				Session:   Allowance{Burst: 30, PerMinute: 10, ConcurrentPerCaller: 4},
				User:      Allowance{Burst: 60, PerMinute: 30, ConcurrentPerCaller: 8},
				App:       Allowance{Burst: 120, PerMinute: 60, ConcurrentPerCaller: 16},
				Sandbox:   Allowance{Burst: 10, PerMinute: 2, ConcurrentPerCaller: 2, ConcurrentPerTier: 8},
			},
			// Probes need tools.net.probe, which no anonymous caller,
			// session or sandbox token holds: those cells stay closed.
			ClassProbe: {
				User: Allowance{Burst: 30, PerMinute: 10, ConcurrentPerCaller: 2},
				App:  Allowance{Burst: 120, PerMinute: 60, ConcurrentPerCaller: 8},
			},
		},
	}
}

// Lookup returns the allowance of class for the caller, and the label of
// the column it came from (a tier name, or "sandbox"). A class the table
// does not name falls back to DefaultClass; ok is false when neither is
// present.
func (t Table) Lookup(class string, c Caller) (a Allowance, column string, ok bool) {
	cl, ok := t.Classes[class]
	if !ok {
		cl, ok = t.Classes[t.DefaultClass]
	}
	if !ok {
		return Allowance{}, "", false
	}
	switch {
	case c.Tier == App && c.Sandbox:
		return cl.Sandbox, "sandbox", true
	case c.Tier == App:
		return cl.App, App.String(), true
	case c.Tier == User:
		return cl.User, User.String(), true
	case c.Tier == Session:
		return cl.Session, Session.String(), true
	default:
		return cl.Anonymous, Anonymous.String(), true
	}
}

// Validate reports the first inconsistency: a negative number, a positive
// burst without refill, or a default class the table does not hold.
func (t Table) Validate() error {
	if _, ok := t.Classes[t.DefaultClass]; !ok {
		return fmt.Errorf("%w: default_class %q is not in classes", ErrInvalidTable, t.DefaultClass)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Classes)) {
		cl := t.Classes[name]
		for _, c := range []struct {
			col string
			a   Allowance
		}{{"anonymous", cl.Anonymous}, {"session", cl.Session}, {"user", cl.User}, {"app", cl.App}, {"sandbox", cl.Sandbox}} {
			a := c.a
			if a.Burst < 0 || a.PerMinute < 0 || a.ConcurrentPerCaller < 0 || a.ConcurrentPerTier < 0 {
				return fmt.Errorf("%w: %s/%s: negative value", ErrInvalidTable, name, c.col)
			}
			if a.Burst > 0 && a.PerMinute == 0 {
				return fmt.Errorf("%w: %s/%s: burst without per_minute", ErrInvalidTable, name, c.col)
			}
		}
	}
	return nil
}

// rawClass makes every column of a class mandatory in JSON.
type rawClass struct {
	Anonymous *Allowance `json:"anonymous"`
	Session   *Allowance `json:"session"`
	User      *Allowance `json:"user"`
	App       *Allowance `json:"app"`
	Sandbox   *Allowance `json:"sandbox"`
}

// ParseTable reads a quota table from JSON:
//
//	{"default_class": "tools-run",
//	 "classes": {"tools-job": {"anonymous": {"burst": 5, "per_minute": 1,
//	   "concurrent_per_caller": 1, "concurrent_per_tier": 4}, "session": {…},
//	   "user": {…}, "app": {…}, "sandbox": {…}}}}
//
// The file overlays [DefaultTable]: a class it names replaces the default
// class wholesale and must give all five columns; classes it does not name
// keep their defaults; default_class may be omitted. Unknown fields are
// errors. The result is validated.
func ParseTable(r io.Reader) (Table, error) {
	var raw struct {
		DefaultClass string              `json:"default_class"`
		Classes      map[string]rawClass `json:"classes"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Table{}, fmt.Errorf("%w: %w", ErrInvalidTable, err)
	}
	if dec.More() {
		return Table{}, fmt.Errorf("%w: trailing data", ErrInvalidTable)
	}
	t := DefaultTable()
	if raw.DefaultClass != "" {
		t.DefaultClass = raw.DefaultClass
	}
	for name, rc := range raw.Classes {
		if name == "" {
			return Table{}, fmt.Errorf("%w: empty class name", ErrInvalidTable)
		}
		if rc.Anonymous == nil || rc.Session == nil || rc.User == nil || rc.App == nil || rc.Sandbox == nil {
			return Table{}, fmt.Errorf("%w: class %s must give anonymous, session, user, app and sandbox", ErrInvalidTable, name)
		}
		t.Classes[name] = Class{Anonymous: *rc.Anonymous, Session: *rc.Session, User: *rc.User, App: *rc.App, Sandbox: *rc.Sandbox}
	}
	if err := t.Validate(); err != nil {
		return Table{}, err
	}
	return t, nil
}

// LoadTable reads a quota table from a JSON file; see [ParseTable].
func LoadTable(path string) (Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Table{}, fmt.Errorf("loading quota table: %w", err)
	}
	t, err := ParseTable(bytes.NewReader(b))
	if err != nil {
		return Table{}, fmt.Errorf("loading quota table %s: %w", path, err)
	}
	return t, nil
}
