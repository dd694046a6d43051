package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
)

// Every problem code an answer mapper of this package can write — a
// refusal's code in either dialect, and every code written directly — is
// in the one table (contracts.Problems) with the status the mapper gives
// it, and the OpenAPI document lists it under that status
// (x-problem-codes): a code the document does not list fails here.
func TestProblemTable(t *testing.T) {
	consts := stringConsts(t, ".", "api")
	for k, v := range stringConsts(t, filepath.Join("..", "contracts"), "contracts") {
		consts[k] = v
	}
	written := map[string]bool{}
	for _, c := range refusalCodes {
		written[c] = true
	}
	for _, c := range seedCodes {
		written[c] = true
	}
	// The codes the package writes by name: the first string argument of
	// problem, toolsProblem and a Problem literal's Code.
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "problem" || id.Name == "toolsProblem") && len(x.Args) > 1 {
					if v, ok := constValue(x.Args[1], consts); ok {
						written[v] = true
					} else {
						t.Errorf("%s: %s's code is not a constant", fset.Position(x.Pos()), id.Name)
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Code" {
					if v, ok := constValue(x.Value, consts); ok {
						written[v] = true
					}
				}
			}
			return true
		})
	}
	if len(written) < 40 {
		t.Fatalf("found %d codes: the scan does not see the mappers", len(written))
	}

	// The OpenAPI document the server serves.
	rec := httptest.NewRecorder()
	startHygiene(t).api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	var doc struct {
		Components struct {
			Responses map[string]struct {
				Codes []string `json:"x-problem-codes"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("openapi.json: %d %v", rec.Code, err)
	}
	for code := range written {
		p, ok := contracts.Problem(code)
		if !ok {
			t.Errorf("a mapper writes %s, which contracts.Problems does not list", code)
			continue
		}
		listed := doc.Components.Responses[strconv.Itoa(p.Status)].Codes
		if !slices.Contains(listed, code) {
			t.Errorf("%s (%d) is not among the OpenAPI document's codes of %d: %v", code, p.Status, p.Status, listed)
		}
	}
}

// stringConsts are the string constants declared in the package in dir:
// "name" for pkg's own, and "pkg.name" too.
func stringConsts(t *testing.T, dir, pkg string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pending []*ast.ValueSpec
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, s := range gd.Specs {
					pending = append(pending, s.(*ast.ValueSpec))
				}
			}
		}
	}
	// Constants defined by other constants resolve in a few rounds.
	for range 3 {
		for _, vs := range pending {
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if v, ok := constValue(vs.Values[i], out); ok {
						out[name.Name], out[pkg+"."+name.Name] = v, v
					}
				}
			}
		}
	}
	return out
}

// constValue is the string value of e: a literal, or a constant consts
// holds.
func constValue(e ast.Expr, consts map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			v, err := strconv.Unquote(x.Value)
			return v, err == nil
		}
	case *ast.Ident:
		v, ok := consts[x.Name]
		return v, ok
	case *ast.SelectorExpr:
		if p, ok := x.X.(*ast.Ident); ok {
			v, ok := consts[p.Name+"."+x.Sel.Name]
			return v, ok
		}
	}
	return "", false
}
