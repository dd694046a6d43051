package wasmtool_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// docSidecar is one example sidecar of docs/tool-authors.md: a marker
// line <!-- sidecar: NAME --> and the fenced json block after it.
var docSidecar = regexp.MustCompile("(?s)<!-- sidecar: ([a-z0-9_-]+) -->\\s*```json\\n(.*?)\\n```")

// The example sidecars of docs/tool-authors.md decode with the real
// decoder and refuse no service; the config example runs against
// testdata/plugin.wat, whose greet export outputs config_get("greeting").
func TestDocSidecars(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testkit.Root(), "docs", "tool-authors.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string][]byte{}
	for _, m := range docSidecar.FindAllSubmatch(doc, -1) {
		examples[string(m[1])] = m[2]
	}
	for _, name := range []string{"vowels", "reverse", "greeter"} {
		if examples[name] == nil {
			t.Errorf("docs/tool-authors.md has no example sidecar %q", name)
		}
	}
	for name, manifest := range examples {
		t.Run(name, func(t *testing.T) {
			p, err := tooldef.Decode(manifest, tooldef.Options{Sidecar: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range p.Services {
				if s.Refusal != nil {
					t.Errorf("service %s: %v", s.ToolCode, s.Refusal)
				}
			}
		})
	}
	manifest := examples["greeter"]
	if manifest == nil {
		return
	}
	tool := loadPlugin(t, manifest)
	for code, want := range map[string]string{"greet": `{"message":"Hello"}`, "greet_it": `{"message":"Ciao"}`} {
		out, err := tool.Run(context.Background(), code, []byte(`{"operation":"greet"}`), wasmtool.Deadlines{})
		if err != nil || string(out.Result) != want {
			t.Errorf("%s: %+v, %v; want %s", code, out, err, want)
		}
	}
	s, _ := tool.Service("greet_it")
	if x := s.Definition.Extism; x.Config["punctuation"] != "!" || x.MaxPages != 16 || x.TimeoutMS != 1000 {
		t.Errorf("greet_it's extism settings %+v: want the package's beside its own greeting", x)
	}
}
