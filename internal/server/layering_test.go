package server_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers are the packages below the routes and what none of them may
// depend on, directly or not (docs/architecture.md): nothing below the
// routes knows HTTP or gin, and the registry holds its loader through its
// own interface, not the WASM loader.
var layers = []struct {
	pkg       string
	forbidden []string // import paths; "p/..." is p and every package under it
}{
	{pkg: "github.com/toolhost/toolhost/internal/guard", forbidden: []string{"net/http/...", "github.com/gin-gonic/gin/..."}},
	{pkg: "github.com/toolhost/toolhost/internal/contracts", forbidden: []string{"net/http/...", "github.com/gin-gonic/gin/..."}},
	{pkg: "github.com/toolhost/toolhost/internal/tooldef", forbidden: []string{"net/http/...", "github.com/gin-gonic/gin/...", "github.com/toolhost/toolhost/internal/contracts"}},
	{pkg: "github.com/toolhost/toolhost/internal/executor", forbidden: []string{"net/http/...", "github.com/gin-gonic/gin/..."}},
	{pkg: "github.com/toolhost/toolhost/internal/registry", forbidden: []string{"github.com/toolhost/toolhost/internal/wasmtool"}},
	// The jobs subsystem runs jobs for the application layer, which
	// hands it its handlers: it knows neither the layer nor the routes.
	{pkg: "github.com/toolhost/toolhost/internal/jobs", forbidden: []string{"github.com/gin-gonic/gin/...",
		"github.com/toolhost/toolhost/internal/run", "github.com/toolhost/toolhost/internal/api"}},
}

// imports are the rules on a package's own imports (not what they bring):
// the application layer knows no HTTP (its metrics package serves
// /metrics with net/http, which is that package's business), and the
// routes reach what runs only through it.
var imports = []struct {
	pkg       string
	forbidden []string
}{
	{pkg: "github.com/toolhost/toolhost/internal/run", forbidden: []string{"net/http", "github.com/gin-gonic/gin",
		"github.com/toolhost/toolhost/internal/api"}},
	{pkg: "github.com/toolhost/toolhost/internal/api", forbidden: []string{"github.com/toolhost/toolhost/internal/jobs",
		"github.com/toolhost/toolhost/internal/store", "github.com/toolhost/toolhost/internal/executor",
		"github.com/toolhost/toolhost/internal/supervisor", "github.com/toolhost/toolhost/internal/guard"}},
}

// TestLayering reads the import graph with go list and fails for each
// layer that reaches a forbidden package, naming the import chain.
func TestLayering(t *testing.T) {
	gobin := goCommand(t)
	args := []string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \",\"}}"}
	for _, l := range layers {
		args = append(args, l.pkg)
	}
	for _, l := range imports {
		args = append(args, l.pkg)
	}
	cmd := exec.Command(gobin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if imports != "" {
			graph[pkg] = strings.Split(imports, ",")
		} else {
			graph[pkg] = nil
		}
	}
	for _, l := range imports {
		t.Run(l.pkg+"/imports", func(t *testing.T) {
			for _, p := range graph[l.pkg] {
				if slices.Contains(l.forbidden, p) {
					t.Errorf("%s imports %s", l.pkg, p)
				}
			}
		})
	}
	for _, l := range layers {
		t.Run(l.pkg, func(t *testing.T) {
			if _, ok := graph[l.pkg]; !ok {
				t.Fatalf("go list did not list %s", l.pkg)
			}
			for _, chain := range chains(graph, l.pkg, l.forbidden) {
				t.Errorf("%s depends on %s: %s", l.pkg, chain[len(chain)-1], strings.Join(chain, " → "))
			}
		})
	}
}

// chains returns, for each forbidden package root reaches, one shortest
// import chain from root to it, in the order they are found.
func chains(graph map[string][]string, root string, forbidden []string) [][]string {
	banned := func(p string) bool {
		for _, f := range forbidden {
			if base, all := strings.CutSuffix(f, "/..."); all && (p == base || strings.HasPrefix(p, base+"/")) || p == f {
				return true
			}
		}
		return false
	}
	parent := map[string]string{root: ""}
	queue := []string{root}
	var found [][]string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		imports := slices.Clone(graph[p])
		slices.Sort(imports)
		for _, q := range imports {
			if _, seen := parent[q]; seen {
				continue
			}
			parent[q] = p
			if banned(q) {
				chain := []string{q}
				for at := p; at != ""; at = parent[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				found = append(found, chain)
				continue // what a forbidden package imports is its own business
			}
			queue = append(queue, q)
		}
	}
	return found
}

// goCommand is the go command of the toolchain running the test, which go
// test puts first on PATH. Without one the test is skipped, except under
// CI=true, where it fails.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no go command: the layering cannot be checked")
	}
	t.Skip("no go command: the layering is not checked")
	return ""
}
