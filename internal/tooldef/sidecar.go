package tooldef

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a sidecar's extism block (docs/tool-authors.md, "Existing
// Extism plugins").
const (
	// MaxConfigKeys bounds a service's config: the package's keys and the
	// service's together.
	MaxConfigKeys = 64
	// MaxConfigKeyBytes bounds one config key (at least one byte).
	MaxConfigKeyBytes = 256
	// MaxConfigValueBytes bounds one config value.
	MaxConfigValueBytes = 4 << 10
	// MaxPages is the most pages memory.max_pages may name: a 32-bit
	// memory's whole 4 GiB.
	MaxPages = 65536
	// PageBytes is one WebAssembly page.
	PageBytes = 64 << 10
)

// extismBlock is one decoded extism block (the package's or a service's)
// with the pointers of what it declared, for refusals.
type extismBlock struct {
	config                           map[string]string
	maxPages, timeoutMS              int64
	configAt, maxPagesAt, timeoutAt  string
	hasConfig, hasMemory, hasTimeout bool
}

// decodeExtism decodes the extism block v (nil when absent) at path.
func decodeExtism(v any, path string) (extismBlock, *Refusal) {
	var b extismBlock
	if v == nil {
		return b, nil
	}
	f := objectAt(v, path)
	config := f.optValue("config")
	memory := f.optValue("memory")
	timeout, hasTimeout := f.get("timeout_ms", false)
	hosts := f.optValue("allowed_hosts")
	paths := f.optValue("allowed_paths")
	if r := f.done(); r != nil {
		return b, r
	}
	if !empty(hosts) {
		return b, refuse(ExtismUnsupported, f.at("allowed_hosts"),
			"the host has no HTTP functions for plugins; declare no allowed_hosts")
	}
	if !empty(paths) {
		return b, refuse(ExtismUnsupported, f.at("allowed_paths"),
			"the host has no file-system functions for plugins; declare no allowed_paths")
	}
	if config != nil {
		c := objectAt(config, f.at("config"))
		if c.err != nil {
			return b, c.err
		}
		if len(c.m) > MaxConfigKeys {
			return b, refuse(BadExtism, c.path, fmt.Sprintf("%d keys: at most %d", len(c.m), MaxConfigKeys))
		}
		b.config, b.configAt, b.hasConfig = map[string]string{}, c.path, true
		for _, k := range slices.Sorted(maps.Keys(c.m)) {
			s, ok := c.m[k].(string)
			switch {
			case !ok:
				return b, refuse(BadShape, c.at(k), "a config value is a string")
			case k == "" || len(k) > MaxConfigKeyBytes:
				return b, refuse(BadExtism, c.at(k), fmt.Sprintf("a config key has 1 to %d bytes", MaxConfigKeyBytes))
			case len(s) > MaxConfigValueBytes:
				return b, refuse(BadExtism, c.at(k), fmt.Sprintf("config value %s has %d bytes: at most %d", quoteName(k), len(s), MaxConfigValueBytes))
			}
			b.config[k] = s
		}
	}
	if memory != nil {
		m := objectAt(memory, f.at("memory"))
		pages, has := m.get("max_pages", true)
		if r := m.done(); r != nil {
			return b, r
		}
		n, ok := positive(pages)
		if !has || !ok || n > MaxPages {
			return b, refuse(BadExtism, m.at("max_pages"), fmt.Sprintf("max_pages is an integer from 1 to %d", MaxPages))
		}
		b.maxPages, b.maxPagesAt, b.hasMemory = n, m.at("max_pages"), true
	}
	if hasTimeout {
		n, ok := positive(timeout)
		if !ok {
			return b, refuse(BadExtism, f.at("timeout_ms"), "timeout_ms is a positive integer")
		}
		b.timeoutMS, b.timeoutAt, b.hasTimeout = n, f.at("timeout_ms"), true
	}
	return b, nil
}

// empty reports whether an allowed_hosts or allowed_paths value declares
// nothing: absent, null, [] or {}.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// positive returns v as a positive integer.
func positive(v any) (int64, bool) {
	n, ok := v.(interface{ String() string }) // json.Number
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	return i, err == nil && i > 0
}

// merge is the service's block over the package's: config key by key,
// memory and timeout_ms as a whole.
func merge(pkg, svc extismBlock) (extismBlock, *Refusal) {
	out := pkg
	if svc.hasConfig {
		out.config = maps.Clone(pkg.config)
		if out.config == nil {
			out.config = map[string]string{}
		}
		maps.Copy(out.config, svc.config)
		out.configAt, out.hasConfig = svc.configAt, true
		if len(out.config) > MaxConfigKeys {
			return out, refuse(BadExtism, svc.configAt,
				fmt.Sprintf("%d keys with the package's: at most %d", len(out.config), MaxConfigKeys))
		}
	}
	if svc.hasMemory {
		out.maxPages, out.maxPagesAt, out.hasMemory = svc.maxPages, svc.maxPagesAt, true
	}
	if svc.hasTimeout {
		out.timeoutMS, out.timeoutAt, out.hasTimeout = svc.timeoutMS, svc.timeoutAt, true
	}
	return out, nil
}

// checkExtism relates a service's merged block to its operations: the
// memory cap fits each memory limit, the timeout each hard deadline.
func checkExtism(b extismBlock, ops []Operation) (Extism, *Refusal) {
	for _, op := range ops {
		p := op.Policy
		if b.maxPages > 0 && b.maxPages*PageBytes > p.MemoryLimitBytes {
			return Extism{}, refuse(BadExtism, b.maxPagesAt, fmt.Sprintf(
				"max_pages %d (%d bytes) is over operation %q's memory_limit_bytes %d",
				b.maxPages, b.maxPages*PageBytes, p.Name, p.MemoryLimitBytes))
		}
		if b.timeoutMS > p.HardTimeoutMS {
			return Extism{}, refuse(BadExtism, b.timeoutAt, fmt.Sprintf(
				"timeout_ms %d is past operation %q's hard_timeout_ms %d",
				b.timeoutMS, p.Name, p.HardTimeoutMS))
		}
	}
	return Extism{Config: b.config, MaxPages: b.maxPages, TimeoutMS: b.timeoutMS}, nil
}

// checkSidecarPlatform refuses what a sidecar plugin's platform block
// cannot have: the host gives plugins no HTTP functions, so every network
// call would trap.
func checkSidecarPlatform(p Platform, path string) *Refusal {
	switch {
	case p.Egress:
		return refuse(ExtismUnsupported, path+"/egress",
			"the host has no HTTP functions for plugins; a sidecar plugin cannot declare egress")
	case len(p.Hosts) > 0:
		return refuse(ExtismUnsupported, path+"/hosts",
			"the host has no HTTP functions for plugins; a sidecar plugin lists no hosts")
	}
	return nil
}

// decodeMapping decodes an operation's "input" or "output" member v at
// path (nil when absent: MapJSON): "json", "none" (inputs only), or an
// object {"text": FIELD} or {"base64": FIELD}.
func decodeMapping(v any, path string, input bool) (Mapping, *Refusal) {
	forms := `"json", {"text": FIELD} or {"base64": FIELD}`
	if input {
		forms = `"json", "none", {"text": FIELD} or {"base64": FIELD}`
	}
	switch x := v.(type) {
	case nil:
		return Mapping{Kind: MapJSON}, nil
	case string:
		if x == string(MapJSON) || (input && x == string(MapNone)) {
			return Mapping{Kind: MappingKind(x)}, nil
		}
		return Mapping{}, refuse(BadMapping, path, "not "+forms)
	case map[string]any:
		if len(x) != 1 {
			return Mapping{}, refuse(BadMapping, path, "an object mapping has exactly one member: text or base64")
		}
		for k, fv := range x {
			if k != string(MapText) && k != string(MapBase64) {
				return Mapping{}, refuse(BadMapping, path+"/"+escapePointer(k), "unknown mapping "+quoteName(k)+": text or base64")
			}
			field, ok := fv.(string)
			if !ok || field == "" || (input && field == "operation") {
				return Mapping{}, refuse(BadMapping, path+"/"+k, "names a field of the schema, other than operation")
			}
			return Mapping{Kind: MappingKind(k), Field: field}, nil
		}
	}
	return Mapping{}, refuse(BadMapping, path, "not "+forms)
}

// checkMappings checks every operation's mappings against the service's
// schemas: an input field is a required string property of each input
// object of its operation, which has no other property but operation
// (none: no property but operation); an output field is a string
// property of an output object that requires nothing else.
func checkMappings(def *Definition, path string) *Refusal {
	for i, op := range def.Operations {
		at := index(path, i)
		if r := checkInput(def.InputSchema, op.Policy.Name, op.Input, at+"/input"); r != nil {
			return r
		}
		if r := checkOutput(def.OutputSchema, op.Output, at+"/output"); r != nil {
			return r
		}
	}
	return nil
}

func checkInput(root any, opName string, m Mapping, at string) *Refusal {
	if m.Kind == MapJSON {
		return nil
	}
	if m.Kind != MapNone {
		at += "/" + string(m.Kind)
	}
	name := quoteName(m.Field)
	for _, obj := range objectRoots(root, root, 0) {
		if !acceptsOperation(root, obj, opName) {
			continue
		}
		props, _ := obj["properties"].(map[string]any)
		if m.Kind != MapNone {
			p, has := props[m.Field]
			if !has || !isString(root, p) {
				return refuse(BadMapping, at, fmt.Sprintf("the input schema has no string property %s for operation %q", name, opName))
			}
			if req, _ := obj["required"].([]any); !slices.Contains(req, any(m.Field)) {
				return refuse(BadMapping, at, fmt.Sprintf("input property %s is not required: the plugin's input is that field", name))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if k != "operation" && k != m.Field {
				return refuse(BadMapping, at, fmt.Sprintf("the input schema declares property %s for operation %q, which the %s mapping never passes to the plugin",
					quoteName(k), opName, m.Kind))
			}
		}
	}
	return nil
}

func checkOutput(root any, m Mapping, at string) *Refusal {
	if m.Kind == MapJSON {
		return nil
	}
	at += "/" + string(m.Kind)
	name := quoteName(m.Field)
	found, stringTyped := false, false
	var others []string
	for _, obj := range objectRoots(root, root, 0) {
		props, _ := obj["properties"].(map[string]any)
		p, has := props[m.Field]
		if !has {
			continue
		}
		found = true
		if !isString(root, p) {
			continue
		}
		stringTyped = true
		var rest []string
		req, _ := obj["required"].([]any)
		for _, r := range req {
			if s, _ := r.(string); s != m.Field {
				rest = append(rest, quoteName(s))
			}
		}
		if len(rest) == 0 {
			return nil
		}
		if others == nil {
			others = rest
		}
	}
	switch {
	case !found:
		return refuse(BadMapping, at, "the output schema has no property "+name)
	case !stringTyped:
		return refuse(BadMapping, at, "output property "+name+" is not a string")
	}
	return refuse(BadMapping, at, fmt.Sprintf("the output schema requires %s beside %s, which the %s mapping never fills",
		strings.Join(others, ", "), name, m.Kind))
}

// maxRefDepth bounds the references and unions followed in a schema that
// passed the profile (which refuses cycles and bounds depth).
const maxRefDepth = 32

// objectRoots returns the object schemas of v: v itself when its type is
// object, else the members of its oneOf or anyOf, local $refs followed.
func objectRoots(root, v any, depth int) []map[string]any {
	m := deref(root, v)
	if m == nil || depth > maxRefDepth {
		return nil
	}
	if t, _ := m["type"].([]any); m["type"] == "object" || (len(t) == 1 && t[0] == "object") {
		return []map[string]any{m}
	}
	var out []map[string]any
	for _, kw := range []string{"oneOf", "anyOf"} {
		members, _ := m[kw].([]any)
		for _, e := range members {
			out = append(out, objectRoots(root, e, depth+1)...)
		}
	}
	return out
}

// acceptsOperation reports whether obj's operation property accepts name.
func acceptsOperation(root any, obj map[string]any, name string) bool {
	props, _ := obj["properties"].(map[string]any)
	p := deref(root, props["operation"])
	if p == nil {
		return false
	}
	if c, ok := p["const"].(string); ok {
		return c == name
	}
	enum, _ := p["enum"].([]any)
	return slices.Contains(enum, any(name))
}

// isString reports whether the property schema v accepts strings only.
func isString(root, v any) bool {
	m := deref(root, v)
	if m == nil {
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return t == "string"
	case []any:
		return len(t) == 1 && t[0] == "string"
	}
	return false
}

// deref returns v as an object schema, its local $refs followed (a $ref
// beside other keywords is followed too: the profile allows no sibling
// that changes a property's type).
func deref(root, v any) map[string]any {
	for range maxRefDepth {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		ref, isRef := m["$ref"].(string)
		if !isRef {
			return m
		}
		if v, ok = resolveLocal(root, ref); !ok {
			return nil
		}
	}
	return nil
}

// resolveLocal resolves a local reference "#/a/b" in root.
func resolveLocal(root any, ref string) (any, bool) {
	if ref == "#" {
		return root, true
	}
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	v := root
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
