package testkit_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
)

// testSupport are the packages of test support: imported by _test.go
// files only.
var testSupport = []string{
	"github.com/toolhost/toolhost/internal/testkit",
}

// TestTestkitOnlyInTests fails for every package of the module whose
// non-test files import a test support package (internal/testkit or a
// package below it), so that none of it is built into the product.
func TestTestkitOnlyInTests(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = testkit.Root()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	support := func(p string) bool {
		for _, s := range testSupport {
			if p == s || strings.HasPrefix(p, s+"/") {
				return true
			}
		}
		return false
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || support(fields[0]) {
			continue
		}
		for _, imp := range fields[1:] {
			if support(imp) {
				t.Errorf("%s imports %s outside its _test.go files", fields[0], imp)
			}
		}
	}
}
