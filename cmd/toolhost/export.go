package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/wire"
)

// runExport is `export [--out DIR]`: the tools of the tools folder and the
// native packages as three documents in DIR — tools.json, their
// tools.tool-list@1 as GET /api/v1/tools answers it; openapi.json, the
// runtime OpenAPI document GET /openapi.json serves; and
// tool-schema-manifest.json, seed 000's build-time schema manifest (an
// OpenAPI 3.1 document with paths {} and one entry per (tool_code,
// contract_version), catalog.Manifest) for the codec generators.
func runExport(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var tf toolFlags
	tf.register(o)
	out := fs.String("out", "dist", "write tools.json, openapi.json and "+catalog.ManifestFile+" into `DIR`")
	if rest, err := o.parse(args, false); err != nil || len(rest) > 0 {
		return usageOr(err, fmt.Errorf("%w: export takes flags only", errUsage))
	}
	ctx := context.Background()
	reg, closeReg, err := openRegistry(ctx, tf, policy.DefaultPlatform(), quietLog())
	if err != nil {
		return err
	}
	defer closeReporting(&err, closeReg)
	snap := reg.Snapshot()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, doc := range map[string]any{
		"tools.json":   catalog.List(snap),
		"openapi.json": catalog.OpenAPI(snap, version(), catalog.Cookies{}),
		// The build-time schema manifest (seed 000's schema export).
		catalog.ManifestFile: catalog.Manifest(snap, version()),
	} {
		if err := writeCanonical(filepath.Join(*out, name), doc); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(stdout, filepath.Join(*out, name)); err != nil {
			return err
		}
	}
	return nil
}

// writeCanonical writes v as canonical JSON to path, through a temporary
// file renamed into place, so that a reader never sees half a document.
func writeCanonical(path string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := wire.Decode(raw, wire.Limits{MaxDepth: 256})
	if err != nil {
		return err
	}
	b, err := wire.Encode(doc, wire.Limits{MaxDepth: 256})
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
