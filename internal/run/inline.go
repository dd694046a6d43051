package run

import (
	"bytes"
	"encoding/base64"
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
