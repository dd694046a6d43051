package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// A sidecar plugin's own error — the plain text every Extism PDK sets —
// reaches the caller as the tool's execution_failed with its message, and
// the operator's log once, at Warn, with the module, the export and the
// item.
func TestPluginErrorLogged(t *testing.T) {
	dir := t.TempDir()
	sidecar, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata/extism/gopdk/gopdk.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"gopdk.wasm": testkit.Extism(t, "gopdk"), "gopdk.tool.json": sidecar} {
		writeFile(t, filepath.Join(dir, name), data)
		age(t, filepath.Join(dir, name))
	}
	cfg, logs := config(t, dir)
	r := open(t, cfg)

	_, err = run(t, r.Snapshot(), "gopdk_refuse", `{"operation":"refuse","text":"abc"}`)
	const text = "refused: 3 bytes of input are not welcome here"
	var te *toolerr.Error
	if !isCode(err, toolerr.ExecutionFailed) || !errors.As(err, &te) || te.Message != text {
		t.Fatalf("err %v (%+v), want execution_failed with the plugin's text", err, te)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "registry: plugin error") {
			if line != "" {
				t.Errorf("logged twice:\n%s\n%s", line, l)
			}
			line = l
		}
	}
	for _, want := range []string{"level=WARN", "file=gopdk.wasm", "export=refuse", "tool_code=gopdk_refuse", `error="` + text + `"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the plugin error's log line %q lacks %s\n%s", line, want, logs)
		}
	}
}
