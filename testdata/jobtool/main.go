// Command jobtool is a test guest: a job tool (execution "job", run.job
// {drop-test, reverse}) that internal/server's TestJobDrop drops into a
// running server's tools folder. Its one operation reverses a text and
// returns it, its length, and the reversed text again as bytes, which the
// server's job handler writes out as the job's output file; an empty text
// is the tool's own error (execution_failed). Built by the
// test with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
package main

import (
	"github.com/toolhost/toolhost/guest"
)

// JobType and Operation are the job the tool's run submits.
const (
	JobType   = "drop-test"
	Operation = "reverse"
)

type input struct {
	Operation string `json:"operation"`
	Text      string `json:"text" maxLength:"1024" doc:"the text to reverse"`
}

type output struct {
	Reversed string `json:"reversed"`
	Runes    int    `json:"runes"`
	// File is the reversed text as bytes: base64 in the result, an
	// output file of the job.
	File []byte `json:"file"`
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func init() {
	texts := map[string]guest.Text{}
	for _, lang := range []string{"en", "it", "fr", "es"} {
		texts[lang] = guest.Text{Name: "Reverse job", Description: "Reverses a text in a job."}
	}
	guest.Register(guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{&guest.Service[input, output]{
			Code: "jobdrop_reverse", Name: "Reverse job", Description: "Reverses a text in a job.",
			Texts: texts, Category: "test", IconKey: "reverse",
			UI:            guest.UI{Kind: "custom", ComponentKey: "jobdrop_reverse", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/jobdrop_reverse", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: Operation, Deterministic: true}},
			Platform: &guest.Platform{
				Execution:   "job",
				Job:         &guest.Job{Type: JobType, Operation: Operation},
				OutputFiles: true,
			},
			Compute: func(ctx *guest.Context, in input) (output, error) {
				if in.Text == "" {
					return output{}, guest.Failed("nothing to reverse")
				}
				out := reverse(in.Text)
				return output{Reversed: out, Runes: len([]rune(out)), File: []byte(out)}, nil
			},
		}},
	})
}

func main() {}
