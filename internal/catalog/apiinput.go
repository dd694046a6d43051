package catalog

import (
	"maps"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/internal/registry"
)

// apiInput is the input schema an API caller of svc sends (issue 16,
// item 7). For a sync or client tool it is the tool's own. A job tool's
// own schema describes the parameters its job runs it with — the
// operation and each file input as a base64 string, both required — which
// no API caller sends: the run route names the operation (run.job) and the
// files come as parts or file references (the descriptor's files). So the
// published schema drops "operation" and the run.job preset's members, and
// no longer requires the file inputs; each stays described, optional, as
// the inline base64 form the API also takes (sniffed like an upload). s is
// not modified.
func apiInput(svc *registry.Service, s any) any {
	p := svc.Definition.Platform
	if p.Job == nil {
		return s
	}
	drop := []string{"operation"}
	for k := range p.Job.Preset {
		drop = append(drop, k)
	}
	var files []string
	for _, f := range p.Files {
		files = append(files, f.Name)
	}
	root, ok := s.(map[string]any)
	if !ok {
		return s
	}
	root = maps.Clone(root)
	if defs, ok := root["$defs"].(map[string]any); ok {
		root["$defs"] = maps.Clone(defs)
	}
	var edit func(m map[string]any, depth int) map[string]any
	edit = func(m map[string]any, depth int) map[string]any {
		if depth > 8 {
			return m
		}
		out := maps.Clone(m)
		if ref, ok := out["$ref"].(string); ok {
			if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
				if defs, ok := root["$defs"].(map[string]any); ok {
					if d, ok := defs[name].(map[string]any); ok {
						defs[name] = edit(d, depth+1)
					}
				}
			}
		}
		if props, ok := out["properties"].(map[string]any); ok {
			props = maps.Clone(props)
			for _, k := range drop {
				delete(props, k)
			}
			out["properties"] = props
		}
		if req, ok := out["required"].([]any); ok {
			kept := make([]any, 0, len(req))
			for _, r := range req {
				if name, _ := r.(string); !slices.Contains(drop, name) && !slices.Contains(files, name) {
					kept = append(kept, r)
				}
			}
			out["required"] = kept
		}
		for _, key := range []string{"oneOf", "anyOf", "allOf"} {
			if alts, ok := out[key].([]any); ok {
				na := make([]any, len(alts))
				for i, a := range alts {
					if am, ok := a.(map[string]any); ok {
						na[i] = edit(am, depth+1)
					} else {
						na[i] = a
					}
				}
				out[key] = na
			}
		}
		return out
	}
	return edit(root, 0)
}
