package main

import (
	"bytes"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"

	"github.com/toolhost/toolhost/internal/tooldef"
)

// newTemplates are the files `toolhost new` writes, each NAME.tmpl
// written as NAME (gitignore as .gitignore).
//
//go:embed newtool/*.tmpl
var newTemplates embed.FS

const (
	// sdkModule is the guest SDK's module path, when guest/ is its own
	// module.
	sdkModule = "github.com/toolhost/toolhost/guest"
	// rootModule is Toolhost's module path, which holds the SDK's package
	// when guest/ is not its own module.
	rootModule = "github.com/toolhost/toolhost"
	// sdkGoVersion is the go directive of a new tool's go.mod when the
	// SDK's own is not at hand.
	sdkGoVersion = "1.26"
)

// toolCodePattern is the tool code rule (tooldef): a new tool's name is
// its service's code.
var toolCodePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// newData fills the templates.
type newData struct {
	// Name is the tool code, the module path and the module file's base.
	Name  string
	Title string
	// SDKModule and SDKVersion are the go.mod requirement; SDKImport the
	// SDK's import path.
	SDKModule  string
	SDKVersion string
	SDKImport  string
	// Replace is the replace directive's target, or "" for none.
	Replace   string
	GoVersion string
}

// runNew is `new NAME [--dir DIR] [--guest-replace PATH]`: a tool package
// that builds as it is into DIR (./NAME by default), which must be missing
// or empty (docs/tool-authors.md).
func runNew(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "write the tool into `DIR` (default ./NAME), which must be missing or empty")
	replace := fs.String("guest-replace", "", "the go.mod replaces the guest SDK with the one at `PATH` (the guest folder of a Toolhost checkout): to build before the SDK is published, or against a checkout")
	positional, err := parseWithPositional(fs, args)
	if err != nil || len(positional) != 1 {
		return usageOr(err, fmt.Errorf("%w: new takes one NAME", errUsage))
	}
	name := positional[0]
	if err := checkToolName(name); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *dir == "" {
		*dir = name
	}
	data := newData{Name: name, Title: toolTitle(name), SDKModule: sdkModule, SDKVersion: sdkVersion(),
		SDKImport: sdkModule, GoVersion: sdkGoVersion}
	if *replace != "" {
		if err := data.replaceWith(*replace); err != nil {
			return fmt.Errorf("%w: --guest-replace: %v", errUsage, err)
		}
	}
	files, err := renderNew(data)
	if err != nil {
		return err
	}
	if err := writeNew(*dir, files); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: a tool with the service %s; build it with:\n  cd %s && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o %s.wasm .\n", *dir, name, *dir, name)
	return err
}

// checkToolName refuses a name that is not a tool code.
func checkToolName(name string) error {
	switch {
	case name == "":
		return errors.New("the tool's NAME is empty")
	case len(name) > tooldef.MaxCodeBytes:
		return fmt.Errorf("the tool's NAME %q is longer than %d bytes", name, tooldef.MaxCodeBytes)
	case !toolCodePattern.MatchString(name):
		return fmt.Errorf("the tool's NAME %q is not a tool code: a lower-case letter, then lower-case letters, digits and _", name)
	case slices.Contains(tooldef.RouteWords, name):
		return fmt.Errorf("the tool's NAME %q is a route word (%s): no tool may be called so", name, strings.Join(tooldef.RouteWords, ", "))
	}
	return nil
}

// toolTitle is the tool's display name: "hello_world" → "Hello world".
func toolTitle(name string) string {
	t := strings.ReplaceAll(name, "_", " ")
	r := []rune(t)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// sdkVersion is the SDK version a new tool requires: this build's own
// when it is a release, else v0.0.0, which only a replace directive
// resolves.
func sdkVersion() string {
	v := version()
	if regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
		return v
	}
	return "v0.0.0"
}

var goDirective = regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`)
var moduleDirective = regexp.MustCompile(`(?m)^module\s+(\S+)\s*$`)

// replaceWith points the new tool at a local SDK: path is the guest
// folder (or the Toolhost checkout holding it). With guest/ its own
// module, the tool requires it; before that, guest/ is a package of
// Toolhost's root module, which the tool then requires and replaces.
func (d *newData) replaceWith(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	for _, c := range []string{abs, filepath.Dir(abs)} {
		mod, err := os.ReadFile(filepath.Join(c, "go.mod"))
		if err != nil {
			continue
		}
		m := moduleDirective.FindSubmatch(mod)
		if m == nil {
			continue
		}
		switch string(m[1]) {
		case sdkModule:
			d.SDKModule, d.Replace = sdkModule, c
		case rootModule:
			if _, err := os.Stat(filepath.Join(c, "guest")); err != nil {
				continue
			}
			d.SDKModule, d.Replace = rootModule, c
		default:
			continue
		}
		if g := goDirective.FindSubmatch(mod); g != nil {
			d.GoVersion = string(g[1])
		}
		return nil
	}
	return fmt.Errorf("%s holds neither the module %s nor the Toolhost module %s with its guest folder", path, sdkModule, rootModule)
}

// renderNew returns the files of a new tool, by name.
func renderNew(data newData) (map[string][]byte, error) {
	entries, err := fs.ReadDir(newTemplates, "newtool")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		text, err := fs.ReadFile(newTemplates, "newtool/"+e.Name())
		if err != nil {
			return nil, err
		}
		t, err := template.New(e.Name()).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(e.Name(), ".tmpl")
		if name == "gitignore" {
			name = ".gitignore"
		}
		files[name] = b.Bytes()
	}
	return files, nil
}

// writeNew writes files into dir, which must be missing or empty; nothing
// is written into a folder that holds anything.
func writeNew(dir string, files map[string][]byte) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s exists and is not empty: toolhost new writes a tool into a new or empty folder only (choose another with --dir)", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range slices.Sorted(mapKeys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
