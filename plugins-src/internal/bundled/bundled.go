// Package bundled holds what the bundled tool packages (markup, text, codec)
// share: how a service is declared, the bounds on text in and out, and how
// the pure packages' errors become tool errors.
package bundled

import (
	"errors"
	"strings"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// The versions every bundled package and service declares.
const (
	ContractVersion       = "1.0.0"
	ImplementationVersion = "1.0.0"
	UIVersion             = "1.0.0"
	DocumentationVersion  = "1.0.0"
)

// MaxTextLength is the maxLength of every text parameter, in code points:
// the platform's 128 KiB parameter cap less 1 KiB for the rest of the
// parameters document. Text of many multi-byte or escaped characters meets
// the byte cap first (input_limit_exceeded).
const MaxTextLength = 128<<10 - 1<<10

// MaxResultBytes bounds the text a transform that can grow its input
// (format, beautify) produces before it gives up: the platform's 256 KiB
// result cap. The result document adds JSON escapes, so the platform may
// still refuse a result below this bound (output_limit_exceeded).
const MaxResultBytes = 256 << 10

// MemoryLimitBytes is every bundled operation's memory limit: the largest
// text, transformed, peaks far below it.
const MemoryLimitBytes = 64 << 20

// Service declares a bundled service from its code, category and texts
// (whose "en" entry gives Name and Description): translation keys
// tools.<code>.name and .description, icon key equal to the code, UI
// component key the code with '_' as '-' (yaml_json → yaml-json),
// documentation at tools/<code>, and the [Platform] of a browser
// transform with a server engine.
func Service[In, Out any](code, category string, texts map[string]guest.Text, ops []guest.Operation,
	compute func(*guest.Context, In) (Out, error)) *guest.Service[In, Out] {
	return &guest.Service[In, Out]{
		Code:           code,
		Name:           texts["en"].Name,
		Description:    texts["en"].Description,
		NameKey:        "tools." + code + ".name",
		DescriptionKey: "tools." + code + ".description",
		Texts:          texts,
		Category:       category,
		IconKey:        code,
		UI:             guest.UI{Kind: "custom", ComponentKey: strings.ReplaceAll(code, "_", "-"), Version: UIVersion},
		Documentation:  guest.Documentation{Path: "tools/" + code, Version: DocumentationVersion},
		Operations:     ops,
		Platform:       Platform(code, ops),
		Compute:        compute,
	}
}

// QuotaClass is the quota class of every bundled transform.
const QuotaClass = "tools-run"

// Platform returns the tools-platform fields of a bundled transform
// (ADR-027, "Browser-only tools may get server engines"): the page runs it
// in the browser (execution client) and the run API runs the same engine
// on the server (api true), for anyone, at cost 1 in tools-run; it never
// fetches. Each operation keeps its deprecated route of the old dev API,
// POST /api/dev/<code>/<operation>. Each call returns a new value.
func Platform(code string, ops []guest.Operation) *guest.Platform {
	p := &guest.Platform{Execution: "client", QuotaClass: QuotaClass, Cost: 1}
	for _, op := range ops {
		p.Legacy = append(p.Legacy, guest.LegacyRoute{Method: "POST", Path: LegacyPrefix + code + "/" + op.Name, Operation: op.Name})
	}
	return p
}

// LegacyPrefix is where the old dev API served the bundled transforms.
const LegacyPrefix = "/api/dev/"

// Operations declares deterministic operations with the bundled memory
// limit and the model's other defaults.
func Operations(names ...string) []guest.Operation {
	ops := make([]guest.Operation, len(names))
	for i, n := range names {
		ops[i] = guest.Operation{Name: n, Deterministic: true, MemoryLimitBytes: MemoryLimitBytes}
	}
	return ops
}

// ToolError turns an error of a pure package into the tool error the caller
// sees: a *textpos.Error (text the transform cannot use) is
// invalid_parameters with its message; an error listed in invalid is
// invalid_parameters with the message given there; an *guest.Error passes
// through; anything else is execution_failed.
func ToolError(err error, invalid map[error]string) error {
	if err == nil {
		return nil
	}
	var pe *textpos.Error
	if errors.As(err, &pe) {
		return guest.InvalidInput("%s", pe.Error())
	}
	var ge *guest.Error
	if errors.As(err, &ge) {
		return ge
	}
	for sentinel, msg := range invalid {
		if errors.Is(err, sentinel) {
			return guest.InvalidInput("%s", msg)
		}
	}
	return guest.Failed("%s", err.Error())
}

// Int returns *p, or def when p is nil (an omitted optional parameter).
func Int(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// Bool returns *p, or def when p is nil.
func Bool(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// String returns *p, or def when p is nil.
func String(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}
