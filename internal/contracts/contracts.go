// Package contracts holds the five JSON contracts of the tools platform API
// (ADR-027) — tools.tool@1, tools.tool-list@1, tools.run-request@1,
// tools.run@1 and tools.job@1 — as JSON Schemas (Draft 2020-12) embedded in
// the binary, the Go shapes of the documents this server builds, and the
// cross-field rules a schema cannot say well: [CheckDescriptor] and
// [CheckList]. docs/contracts.md is the reference.
//
// The schemas reference each other by relative URI (tools.tool.v1.json,
// tools.job.v1.json#/$defs/…) and carry $ids under /api/v1/contracts/, so a
// client that fetches them from that route resolves the references against
// the server. Here each contract is compiled once, at package
// initialisation, as a compound document with the others embedded: nothing
// is ever loaded from the network or the file system. Validation results
// are sanitised as package schema sanitises them.
package contracts

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// The contract names. A contract's file, as served under [Route], is its
// name followed by ".json".
const (
	ToolV1       = "tools.tool.v1"
	ToolListV1   = "tools.tool-list.v1"
	RunRequestV1 = "tools.run-request.v1"
	RunV1        = "tools.run.v1"
	JobV1        = "tools.job.v1"
)

// Route is the path the contracts are served under: Route + name + ".json".
const Route = "/api/v1/contracts/"

// documentDepth bounds the nesting of a validated document: a descriptor
// embeds a tool's schemas, which may nest schema.MaxDepth deep, a list
// nests them a few levels further.
const documentDepth = schema.MaxDepth + 16

var (
	// ErrUnknownContract is returned by Validate when the name is not one of
	// the contracts.
	ErrUnknownContract = errors.New("contracts: unknown contract")
	// ErrInvalid matches every *Error with errors.Is: a document that does
	// not pass its contract.
	ErrInvalid = errors.New("contracts: document does not pass its contract")
)

// Error is a document refused by its contract: the contract's name and the
// sanitised issues (a stable code and the instance location each, never a
// value from the document), at most toolerr.MaxIssues with IssueCount the
// total.
type Error struct {
	Contract   string
	Issues     []toolerr.Issue
	IssueCount int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d issue(s)", e.Contract, e.IssueCount)
	for i, is := range e.Issues {
		if i == 4 {
			b.WriteString(", …")
			break
		}
		fmt.Fprintf(&b, ", %s at /%s", is.Code, strings.Join(is.Path, "/"))
	}
	return b.String()
}

// Is matches ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

//go:embed schemas/*.json
var files embed.FS

// names are the contracts, in the order they are compiled.
var names = []string{ToolV1, ToolListV1, RunRequestV1, RunV1, JobV1}

// raws holds the text of every contract as it is served, read at
// initialisation (the embedded files: no I/O).
var raws = func() map[string][]byte {
	raw := make(map[string][]byte, len(names))
	for _, n := range names {
		b, err := files.ReadFile("schemas/" + n + ".json")
		if err != nil {
			panic(fmt.Sprintf("contracts: reading %s: %v", n, err))
		}
		raw[n] = b
	}
	return raw
}()

// validators are the compiled contracts and the problem document.
type validators struct {
	byName  map[string]*schema.Validator
	problem *schema.Validator
}

// compiled compiles every contract once, on first use (Validate,
// ValidateDocument, ValidateProblem, Precompile): it takes ≈ 60 ms and
// 16 MB of allocations, which a process that validates nothing — a native
// worker, whose exit time grows with its heap, or `toolhost version` —
// must not pay when it starts. A contract that does not compile is a
// programming error that every test of the package catches.
var compiled = sync.OnceValue(func() validators {
	out := validators{byName: make(map[string]*schema.Validator, len(names))}
	for _, n := range names {
		root, err := decodeObject(raws[n])
		if err != nil {
			panic(fmt.Sprintf("contracts: %s: %v", n, err))
		}
		v, err := compileBundled(n, root, raws)
		if err != nil {
			panic(fmt.Sprintf("contracts: compiling %s: %v", n, err))
		}
		out.byName[n] = v
	}
	// The problem document is a definition of the run-request contract.
	problem, err := compileBundled("", map[string]any{
		"$schema": schema.Dialect,
		"$id":     Route + "problem.json",
		"$ref":    RunRequestV1 + ".json#/$defs/problem",
	}, raws)
	if err != nil {
		panic(fmt.Sprintf("contracts: compiling the problem document: %v", err))
	}
	out.problem = problem
	return out
})

// Precompile compiles the contracts now rather than at the first
// validation; a server calls it in the background as it starts. It is
// safe to call any number of times, concurrently.
func Precompile() { compiled() }

// validator returns the named contract's validator.
func validator(name string) (*schema.Validator, bool) {
	v, ok := compiled().byName[name]
	return v, ok
}

// bundleKey prefixes the $defs entries that embed the other contracts;
// no contract's own $defs use it.
const bundleKey = "contract:"

func decodeObject(text []byte) (map[string]any, error) {
	v, err := wire.Decode(text, wire.Limits{MaxDepth: schema.MaxDepth})
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	return m, nil
}

// compileBundled compiles root, the schema of contract name (or of no
// contract, ""), as a compound document: every other contract is embedded
// under its $defs, each keeping its $id, so that the relative references
// between contracts resolve without loading anything.
func compileBundled(name string, root map[string]any, raw map[string][]byte) (*schema.Validator, error) {
	defs, _ := root["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
		root["$defs"] = defs
	}
	for _, other := range slices.Sorted(maps.Keys(raw)) {
		if other == name {
			continue
		}
		doc, err := decodeObject(raw[other])
		if err != nil {
			return nil, fmt.Errorf("embedding %s: %w", other, err)
		}
		defs[bundleKey+other] = doc
	}
	return schema.Compile(root)
}

// Names returns the contract names, sorted.
func Names() []string { return slices.Sorted(maps.Keys(raws)) }

// Raw returns the text of the named contract as it is served, and whether
// there is one. The bytes are shared: callers must not modify them.
func Raw(name string) ([]byte, bool) {
	b, ok := raws[name]
	return b, ok
}

// Validate checks doc against the named contract. doc is either a decoded
// JSON value (as package wire produces it) or any value encoding/json
// encodes, such as a [Tool]; it is encoded and decoded again so that what
// is checked is exactly what would be sent. It returns nil, an *Error
// (matching ErrInvalid), ErrUnknownContract, or the encoding error.
// It is safe for concurrent use.
func Validate(name string, doc any) error {
	v, ok := validator(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownContract, name)
	}
	text, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the %s document: %w", name, err)
	}
	return validate(name, v, text)
}

// ProblemName is the name a problem document's *Error carries.
const ProblemName = RunRequestV1 + "#/$defs/problem"

// ValidateProblem checks doc, as Validate does, against the problem
// document of tools.run-request@1 ($defs/problem): the RFC 9457 body of a
// refusal before a tool runs, with one of the listed codes.
func ValidateProblem(doc any) error {
	text, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the problem document: %w", err)
	}
	return validate(ProblemName, compiled().problem, text)
}

func validate(name string, v *schema.Validator, text []byte) error {
	doc, err := wire.Decode(text, wire.Limits{MaxDepth: documentDepth})
	if err != nil {
		return fmt.Errorf("decoding the %s document: %w", name, err)
	}
	err = v.Validate(doc, toolerr.InvalidOutput)
	var te *toolerr.Error
	if errors.As(err, &te) {
		return &Error{Contract: name, Issues: te.Issues, IssueCount: te.IssueCount}
	}
	return err
}
