package contracts

import (
	"encoding/json"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// Job is a tools.job@1 document: a job as its owner reads it, with signed
// download URLs for its result files.
type Job struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Tool     string          `json:"tool,omitempty"`
	State    RunStatus       `json:"state"`
	Progress int64           `json:"progress"`
	Input    json.RawMessage `json:"input"`
	Result   json.RawMessage `json:"result"`
	Error    *toolerr.Error  `json:"error"`
	Files    []JobFile       `json:"files"`
	Created  string          `json:"created"`
	Started  *string         `json:"started"`
	Finished *string         `json:"finished"`
	Attempts int             `json:"attempts"`
	// References are the file references the job was submitted with.
	References []FileReference `json:"references"`
}

// JobFile is a result file of a job document.
type JobFile struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Bytes   int64  `json:"bytes"`
	Owner   string `json:"owner"`
	Expires string `json:"expires"`
	URL     string `json:"url"`
	Expired bool   `json:"expired,omitempty"`
}

// RunFiles are the job's files as a tools.run@1 document shows them.
func (j *Job) RunFiles() []File {
	var out []File
	for _, f := range j.Files {
		bytes := f.Bytes
		out = append(out, File{Name: f.Name, URL: f.URL, Owner: f.Owner, Expires: f.Expires, Type: f.Type, Bytes: &bytes, Expired: f.Expired})
	}
	return out
}
