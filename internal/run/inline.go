package run

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// InlineFiles takes the files a job's input carries inline — a base64
// string under the name of one of svc's file inputs — out of input and
// returns them as uploads, so that they reach the job as every file does:
// sniffed, checked against the accepted types and the size limit, and
// stored as the job's input files by the jobs subsystem (issue 16,
// item 3: an inline PDF used to skip the sniffing). input is changed in
// place. A value that is not base64 is an InvalidInput refusal naming the
// input; a value that is not a string is left for the schema check.
func InlineFiles(svc *registry.Service, input map[string]any) ([]jobs.Upload, error) {
	var ups []jobs.Upload
	for _, f := range svc.Platform().Files {
		s, ok := input[f.Name].(string)
		if !ok {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			r := refuse(InvalidInput, "The inline file "+f.Name+" is not base64.")
			r.Issues, r.IssueCount = []toolerr.Issue{toolerr.NewIssue("contentEncoding", f.Name)}, 1
			return nil, r
		}
		delete(input, f.Name)
		ups = append(ups, jobs.Upload{Name: f.Name, Content: bytes.NewReader(b)})
	}
	return ups, nil
}

// Secrets names the top-level input members of svc that its input schema
// marks writeOnly (a PDF's passwords), in the schema's properties, its
// oneOf/anyOf/allOf branches and the local $defs they refer to: the jobs
// subsystem keeps them out of the job's row, documents and events
// (jobs.Submission.Secrets).
func Secrets(svc *registry.Service) []string {
	root, _ := svc.Definition.InputSchema.(map[string]any)
	defs, _ := root["$defs"].(map[string]any)
	var names []string
	var walk func(m map[string]any, depth int)
	walk = func(m map[string]any, depth int) {
		if m == nil || depth > 8 {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
				d, _ := defs[name].(map[string]any)
				walk(d, depth+1)
			}
		}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			if pm, ok := p.(map[string]any); ok && pm["writeOnly"] == true && !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
		for _, key := range []string{"oneOf", "anyOf", "allOf"} {
			alts, _ := m[key].([]any)
			for _, a := range alts {
				am, _ := a.(map[string]any)
				walk(am, depth+1)
			}
		}
	}
	walk(root, 0)
	slices.Sort(names)
	return names
}
