package contracts

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The table holds each code once, with a status net/http knows, and a
// type that is an ADR-027 code of the table with the same status.
func TestProblemTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Problems {
		if seen[p.Code] {
			t.Errorf("%s is listed twice", p.Code)
		}
		seen[p.Code] = true
		if http.StatusText(p.Status) == "" || p.When == "" {
			t.Errorf("%s: status %d, when %q", p.Code, p.Status, p.When)
		}
		if p.Type == "" {
			continue
		}
		if tp, ok := Problem(p.Type); !ok || tp.Type != "" || (tp.Status != p.Status && p.Code != ProblemLegacyNotFound) {
			t.Errorf("%s: type %s is not an ADR-027 code of the same status", p.Code, p.Type)
		}
	}
	if !slices.IsSorted(ProblemStatuses()) || ProblemStatus("no such code") != 500 {
		t.Error("ProblemStatuses or ProblemStatus")
	}
}

// problemsSection renders the table as docs/errors.md prints it.
func problemsSection() string {
	var b strings.Builder
	b.WriteString("| status | code | dialect | type | when |\n| --- | --- | --- | --- | --- |\n")
	for _, p := range Problems {
		typ := "—"
		if p.Type != "" {
			typ = "`" + p.Type + "`"
		}
		b.WriteString("| " + strconv.Itoa(p.Status) + " | `" + p.Code + "` | " + string(p.Dialect) + " | " + typ + " | " + p.When + " |\n")
	}
	return b.String()
}

// docs/errors.md prints the table as it is (between its problems
// markers): the documentation reads the same table as the mappers and
// the OpenAPI document. -update rewrites the section.
func TestErrorsDocument(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "errors.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- problems:begin -->\n", "<!-- problems:end -->"
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q section", path, begin, end)
	}
	want := problemsSection()
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv("TOOLHOST_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's problem table is not contracts.Problems (TOOLHOST_UPDATE_DOCS=1 rewrites it); want:\n%s", path, want)
	}
}
