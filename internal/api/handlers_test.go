package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// readers are the application layer's accessors of the live state (the
// registry generation, the platform policy, whether jobs run): reading
// them is not a use case.
var readers = []string{"Snapshot", "Platform", "Guard", "RunsJobs", "JobsStorage"}

// Every handler of the API — each function taking the request's
// *gin.Context, middlewares included — calls at most one use case of the
// application layer (a method of *run.App other than its readers), the
// helpers it calls inside this package followed: a route decodes, makes
// one call, and answers (docs/architecture.md).
func TestOneUseCasePerHandler(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	// calls maps each function of the package (a method by its name) to
	// the use cases it calls and the package's functions it calls.
	type calls struct {
		uses, funcs []string
		handler     bool
	}
	graph := map[string]*calls{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			c := &calls{handler: takesContext(fd)}
			graph[fd.Name.Name] = c
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fn := call.Fun.(type) {
				case *ast.Ident:
					c.funcs = append(c.funcs, fn.Name)
				case *ast.SelectorExpr:
					if isRunApp(fn.X) {
						if !slices.Contains(readers, fn.Sel.Name) {
							c.uses = append(c.uses, fn.Sel.Name)
						}
					} else if id, ok := fn.X.(*ast.Ident); ok && (id.Name == "s" || id.Name == "b" || id.Name == "mp") {
						c.funcs = append(c.funcs, fn.Sel.Name)
					}
				}
				return true
			})
		}
	}
	handlers := 0
	for name, c := range graph {
		if !c.handler {
			continue
		}
		handlers++
		seen := map[string]bool{}
		var uses []string
		var walk func(string)
		walk = func(fn string) {
			if seen[fn] {
				return
			}
			seen[fn] = true
			fc, ok := graph[fn]
			if !ok {
				return
			}
			for _, u := range fc.uses {
				if !slices.Contains(uses, u) {
					uses = append(uses, u)
				}
			}
			for _, g := range fc.funcs {
				walk(g)
			}
		}
		walk(name)
		if len(uses) > 1 {
			slices.Sort(uses)
			t.Errorf("%s calls %d use cases of the application layer: %s", name, len(uses), strings.Join(uses, ", "))
		}
	}
	if handlers < 20 {
		t.Fatalf("found %d handlers: the check does not see the routes", handlers)
	}
}

// takesContext reports whether fd takes a *gin.Context.
func takesContext(fd *ast.FuncDecl) bool {
	for _, p := range fd.Type.Params.List {
		if st, ok := p.Type.(*ast.StarExpr); ok {
			if sel, ok := st.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "gin" {
					return true
				}
			}
		}
	}
	return false
}

// isRunApp reports whether x is s.cfg.Run, the application layer.
func isRunApp(x ast.Expr) bool {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Run" {
		return false
	}
	inner, ok := sel.X.(*ast.SelectorExpr)
	return ok && inner.Sel.Name == "cfg"
}
