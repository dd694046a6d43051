package tooldef

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
)

// Platform is a service's place on the tools platform (ADR-027): the
// fields of its tools.tool@1 descriptor that only the tool can declare.
// Decode fills every field, from the declaration's optional "platform"
// block or from the defaults ([DefaultPlatform]); the registry and the
// catalogue read it as it is.
type Platform struct {
	Status Status
	// StatusReason is set exactly when Status is unavailable.
	StatusReason string
	Execution    Execution
	// API says whether the run API and the SDK run the tool; false for a
	// page-only tool.
	API bool
	// Job is set for a job tool in the API: what its run submits.
	Job *RunJob
	// Legacy are the deprecated routes that reach the tool.
	Legacy []LegacyRoute
	// Files are the file inputs the tool accepts.
	Files []FileInput
	// OutputFiles says whether a run produces files.
	OutputFiles bool
	// Anonymous false refuses anonymous callers.
	Anonymous bool
	// Capability is the capability a run needs beyond tools.tool.run; ""
	// for none.
	Capability string
	QuotaClass string
	Cost       int
	Egress     bool
	// Hosts are the fixed hosts a run contacts.
	Hosts []string
	// PerTargetPerMinute is the per-target throttle; 0 for none.
	PerTargetPerMinute int
}

// The default quota classes.
const (
	// QuotaClassRun is the default class of client and sync tools.
	QuotaClassRun = "tools-run"
	// QuotaClassJob is the default class of job tools.
	QuotaClassJob = "tools-job"
)

// Bounds of the platform block.
const (
	maxCost          = 1000
	maxLegacyRoutes  = 16
	maxFileInputs    = 16
	maxFileTypes     = 16
	maxHosts         = 64
	maxStatusReason  = 200
	maxPerTargetRate = 1_000_000
)

// DefaultPlatform returns the platform fields of a service that declares
// no platform block: a WASM transform that the page runs in the browser
// and the server runs for API callers — stable, execution client, api true,
// anonymous callers allowed, no capability, quota class tools-run, cost 1,
// no egress, no hosts, no files.
func DefaultPlatform() Platform {
	return Platform{
		Status:     StatusStable,
		Execution:  ExecutionClient,
		API:        true,
		Legacy:     []LegacyRoute{},
		Files:      []FileInput{},
		Anonymous:  true,
		QuotaClass: QuotaClassRun,
		Cost:       1,
		Hosts:      []string{},
	}
}

var (
	jobTypePattern    = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)
	legacyPathPattern = regexp.MustCompile(`^/api/(process|net|dev)(/[A-Za-z0-9_.:-]+)*$`)
	selectorPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	mediaTypePattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$`)
	capabilityPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(\.[a-z][a-z0-9_]*)+$`)
	quotaClassPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	hostPattern       = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
)

// decodePlatform decodes a service's platform block v (nil when absent) at
// path and checks it against the service's operations and ADR-027's
// descriptor rules.
func decodePlatform(v any, path string, def *Definition) (Platform, *Refusal) {
	p := DefaultPlatform()
	if v == nil {
		return p, nil
	}
	f := objectAt(v, path)
	status := f.optStr("status")
	reason := f.optStr("status_reason")
	execution := f.optStr("execution")
	p.API = f.boolean("api", true)
	job := f.optValue("job")
	legacy := f.optArray("legacy")
	files := f.optArray("files")
	p.OutputFiles = f.boolean("output_files", false)
	p.Anonymous = f.boolean("anonymous", true)
	capability := f.optStr("capability")
	quotaClass := f.optStr("quota_class")
	p.Cost = int(f.integer("cost", 1))
	p.Egress = f.boolean("egress", false)
	hosts := f.optArray("hosts")
	p.PerTargetPerMinute = int(f.integer("per_target_per_minute", 0))
	if r := f.done(); r != nil {
		return p, r
	}
	bad := func(field, detail string) (Platform, *Refusal) {
		return p, refuse(BadPlatform, f.at(field), detail)
	}

	if status != nil {
		p.Status = Status(*status)
		if !slices.Contains(Statuses, p.Status) {
			return bad("status", "not stable, beta, preview or unavailable")
		}
	}
	if reason != nil {
		p.StatusReason = *reason
		if p.StatusReason == "" || len(p.StatusReason) > maxStatusReason {
			return bad("status_reason", "1 to 200 bytes")
		}
	}
	if execution != nil {
		p.Execution = Execution(*execution)
		if !slices.Contains(Executions, p.Execution) {
			return bad("execution", "not client, sync or job")
		}
	}
	if job != nil {
		if !p.API {
			return bad("job", "a tool outside the API (api false) names no job")
		}
		j, r := decodeJob(job, f.at("job"), def)
		if r != nil {
			return p, r
		}
		p.Job = j
	}
	if len(legacy) > 0 {
		if !p.API {
			return bad("legacy", "a tool outside the API (api false) has no legacy routes")
		}
		routes, r := decodeLegacy(legacy, f.at("legacy"), def)
		if r != nil {
			return p, r
		}
		p.Legacy = routes
	}
	if files != nil {
		inputs, r := decodeFiles(files, f.at("files"))
		if r != nil {
			return p, r
		}
		p.Files = inputs
	}
	if capability != nil {
		p.Capability = *capability
		if !capabilityPattern.MatchString(p.Capability) || len(p.Capability) > MaxCodeBytes {
			return bad("capability", "not a capability name such as tools.net.probe")
		}
	}
	if p.Execution == ExecutionJob {
		p.QuotaClass = QuotaClassJob
	}
	if quotaClass != nil {
		p.QuotaClass = *quotaClass
		if !quotaClassPattern.MatchString(p.QuotaClass) || len(p.QuotaClass) > MaxCodeBytes {
			return bad("quota_class", "lower-case words joined by -, at most 64 bytes")
		}
	}
	if p.Cost < 1 || p.Cost > maxCost {
		return bad("cost", "an integer from 1 to 1000")
	}
	if hosts != nil {
		if len(hosts) > maxHosts {
			return bad("hosts", "at most 64 hosts")
		}
		for i, h := range hosts {
			s, ok := h.(string)
			if !ok || len(s) > 253 || !hostPattern.MatchString(s) {
				return p, refuse(BadPlatform, index(f.at("hosts"), i), "not a lower-case host name")
			}
			if slices.Contains(p.Hosts, s) {
				return p, refuse(BadPlatform, index(f.at("hosts"), i), "listed twice")
			}
			p.Hosts = append(p.Hosts, s)
		}
		slices.Sort(p.Hosts)
	}
	if p.PerTargetPerMinute < 0 || p.PerTargetPerMinute > maxPerTargetRate {
		return bad("per_target_per_minute", "a positive integer (absent: no per-target throttle)")
	}
	return p, checkPlatform(p, path)
}

// descriptorFields maps the descriptor members that [CheckPlatform]'s
// findings point at to the platform block's fields.
var descriptorFields = map[string]string{
	"/run/job":                   "job",
	"/run/job/preset/tool":       "job/preset",
	"/output/files":              "output_files",
	"/limits/perTargetPerMinute": "per_target_per_minute",
	"/auth/anonymous":            "anonymous",
	"/auth/capability":           "capability",
	"/egress":                    "egress",
	"/hosts":                     "hosts",
	"/quotaClass":                "quota_class",
	"/cost":                      "cost",
	"/statusReason":              "status_reason",
}

// checkPlatform applies [CheckPlatform] to the block, so that a published
// service never makes a descriptor that breaks ADR-027's rules. The
// refusal's detail is the first finding's code, its path the block's
// field the finding's descriptor member comes from.
func checkPlatform(p Platform, path string) *Refusal {
	findings := CheckPlatform(p, p.API)
	if len(findings) == 0 {
		return nil
	}
	at := path
	if field, ok := descriptorFields[findings[0].Path]; ok {
		at += "/" + field
	}
	return refuse(BadPlatform, at, findings[0].Code)
}

// decodeJob decodes the job block: {type, operation, preset?}.
func decodeJob(v any, path string, def *Definition) (*RunJob, *Refusal) {
	f := objectAt(v, path)
	j := &RunJob{Type: f.str("type"), Operation: f.str("operation"), Preset: map[string]any{}}
	if preset := f.optValue("preset"); preset != nil {
		m, ok := preset.(map[string]any)
		if !ok {
			f.fail(BadShape, "preset", "not an object")
		}
		j.Preset = m
	}
	if r := f.done(); r != nil {
		return nil, r
	}
	switch {
	case !jobTypePattern.MatchString(j.Type):
		return nil, refuse(BadPlatform, f.at("type"), "a job type matches [a-z][a-z0-9_-]*, at most 64 bytes")
	case !slices.Contains(def.OperationNames(), j.Operation):
		return nil, refuse(BadPlatform, f.at("operation"), "not one of the service's operations")
	}
	return j, nil
}

// decodeLegacy decodes the legacy routes: {method, path, operation?,
// selector?}, no route twice.
func decodeLegacy(items []any, path string, def *Definition) ([]LegacyRoute, *Refusal) {
	if len(items) > maxLegacyRoutes {
		return nil, refuse(BadPlatform, path, "at most 16 legacy routes")
	}
	out := make([]LegacyRoute, 0, len(items))
	for i, v := range items {
		at := index(path, i)
		f := objectAt(v, at)
		lr := LegacyRoute{Method: f.str("method"), Path: f.str("path")}
		if op := f.optStr("operation"); op != nil {
			lr.Operation = *op
		}
		if sel := f.optStr("selector"); sel != nil {
			lr.Selector = *sel
		}
		if r := f.done(); r != nil {
			return nil, r
		}
		switch {
		case lr.Method != "GET" && lr.Method != "POST":
			return nil, refuse(BadPlatform, at+"/method", "GET or POST")
		case len(lr.Path) > 200 || !legacyPathPattern.MatchString(lr.Path):
			return nil, refuse(BadPlatform, at+"/path", "a route under /api/process, /api/net or /api/dev")
		case lr.Operation != "" && !slices.Contains(def.OperationNames(), lr.Operation):
			return nil, refuse(BadPlatform, at+"/operation", "not one of the service's operations")
		case lr.Selector != "" && !selectorPattern.MatchString(lr.Selector):
			return nil, refuse(BadPlatform, at+"/selector", "a legacy tool name matches [a-z0-9][a-z0-9_-]*")
		}
		for _, prev := range out {
			if prev.Method == lr.Method && prev.Path == lr.Path && prev.Selector == lr.Selector {
				return nil, refuse(BadPlatform, at, "route declared twice")
			}
		}
		out = append(out, lr)
	}
	return out, nil
}

// decodeFiles decodes the file inputs: {name, types, max_bytes}, unique
// names.
func decodeFiles(items []any, path string) ([]FileInput, *Refusal) {
	if len(items) > maxFileInputs {
		return nil, refuse(BadPlatform, path, "at most 16 file inputs")
	}
	out := make([]FileInput, 0, len(items))
	for i, v := range items {
		at := index(path, i)
		f := objectAt(v, at)
		in := FileInput{Name: f.str("name")}
		types := f.array("types")
		in.MaxBytes = f.integer("max_bytes", 0)
		if r := f.done(); r != nil {
			return nil, r
		}
		switch {
		case !validCode(in.Name):
			return nil, refuse(BadPlatform, at+"/name", "must use the tool code format")
		case len(types) == 0 || len(types) > maxFileTypes:
			return nil, refuse(BadPlatform, at+"/types", "1 to 16 media types")
		case in.MaxBytes < 1:
			return nil, refuse(BadPlatform, at+"/max_bytes", "a positive integer")
		}
		for k, t := range types {
			s, ok := t.(string)
			if !ok || len(s) > 127 || !mediaTypePattern.MatchString(s) {
				return nil, refuse(BadPlatform, index(at+"/types", k), "not a lower-case media type")
			}
			if slices.Contains(in.Types, s) {
				return nil, refuse(BadPlatform, index(at+"/types", k), "listed twice")
			}
			in.Types = append(in.Types, s)
		}
		if slices.ContainsFunc(out, func(o FileInput) bool { return o.Name == in.Name }) {
			return nil, refuse(BadPlatform, at+"/name", "file input declared twice")
		}
		out = append(out, in)
	}
	return out, nil
}

// integer reads an optional integer field of at most 2^53 in magnitude,
// def when absent or null.
func (f *fields) integer(name string, def int64) int64 {
	v, ok := f.get(name, false)
	if !ok {
		return def
	}
	n, isNumber := v.(json.Number)
	if !isNumber {
		f.fail(BadShape, name, "not an integer")
		return def
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < -1<<53 || i > 1<<53 {
		f.fail(BadShape, name, "not an integer in range")
		return def
	}
	return i
}

// optValue returns a field that may be absent or null, as decoded JSON.
func (f *fields) optValue(name string) any {
	v, _ := f.get(name, false)
	return v
}

// optArray reads an array that may be absent or null (nil then).
func (f *fields) optArray(name string) []any {
	v, ok := f.get(name, false)
	if !ok {
		return nil
	}
	a, isArray := v.([]any)
	if !isArray {
		f.fail(BadShape, name, "not an array")
		return nil
	}
	return a
}
