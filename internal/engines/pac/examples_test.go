package pac

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the example results in testdata/examples")

// TestExamples computes every testdata/examples/<name>.params.json and
// compares the result with <name>.result.json, the examples quoted in
// docs/tools/pac_allocator.md. The solver's time_ms is written as 0: it is
// the one measured, varying field. Run with -update to rewrite them.
func TestExamples(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "examples", "*.params.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".params.json")
		t.Run(name, func(t *testing.T) {
			params, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var in Input
			dec := json.NewDecoder(bytes.NewReader(params))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			if in.Operation == OpPlan {
				requireCBC(t) // most plan examples run the solver
			}
			out := mustRun(t, in)
			if out.Solver != nil {
				out.Solver.TimeMS = 0
			}
			res, err := native.EncodeResult(out, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Canonical JSON, as the worker returns it.
			doc, err := wire.Decode(res, wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res, err = wire.Encode(doc, wire.Limits{}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "examples", name+".result.json")
			if *update {
				if err := os.WriteFile(golden, append(res, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if got := string(res); got != strings.TrimSuffix(string(want), "\n") {
				t.Errorf("result of %s:\n%s\nwant\n%s", name, got, want)
			}
		})
	}
}
