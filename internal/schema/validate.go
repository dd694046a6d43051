package schema

import (
	"cmp"
	"errors"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// resourceURL names the one in-memory resource a [Validator] is compiled
// from. It never appears in a result. It is hierarchical on purpose: against
// an opaque base such as "urn:x" a relative reference like "other.json"
// resolves to the document itself and would compile.
const resourceURL = "toolhost:///schema.json"

// Validator validates documents against one compiled schema. It is
// immutable and safe for concurrent use by multiple goroutines.
type Validator struct {
	schema *jsonschema.Schema
	// flat is the schema's flat check (fast.go), nil when the schema is
	// not flat.
	flat *flatSchema
}

// errNoLoading refuses every reference outside the compiled document.
var errNoLoading = errors.New("schema: loading external resources is not allowed")

type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errNoLoading }

// Compile compiles a schema, a decoded JSON value as package wire produces
// it, for validation. Draft 2020-12 applies unless the schema's $schema
// names another draft; format and content keywords are annotations only;
// nothing is loaded from the network or the file system, so a reference
// outside the schema fails. A refused schema gives a [*ProfileError] with
// [InvalidSchema] (or [TooDeep]) violations whose paths start with "schema".
//
// The Validator may keep references into schema: the caller must not
// modify schema afterwards. [Check] calls the same compiler, so a pair that
// passes Check compiles.
func Compile(schema any) (*Validator, error) {
	var c collector
	if at, deep := tooDeep(schema, MaxDepth); deep {
		c.add(TooDeep, "schema"+pointer(at))
		return nil, c.err()
	}
	s, vs, err := compile(schema)
	if err != nil {
		for _, at := range vs {
			c.add(InvalidSchema, "schema"+pointer(at))
		}
		if len(vs) == 0 {
			c.add(InvalidSchema, "schema")
		}
		return nil, c.err()
	}
	return &Validator{schema: s, flat: compileFlat(schema)}, nil
}

// compile compiles schema. On failure it also returns the locations in
// schema that the metaschema refused, when that was the failure.
func compile(schema any) (*jsonschema.Schema, [][]string, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(resourceURL, schema); err != nil {
		return nil, nil, err
	}
	s, err := c.Compile(resourceURL)
	if err == nil {
		return s, nil, nil
	}
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return nil, nil, err
	}
	var locs [][]string
	for _, l := range sortedLeaves(ve, schema) {
		locs = append(locs, l.loc)
	}
	// Several metaschema leaves often share one location (the two branches
	// of type's anyOf): one violation per location is enough.
	locs = slices.CompactFunc(locs, slices.Equal)
	return nil, locs, err
}

// Validate validates doc, a decoded JSON value as package wire produces it,
// and returns nil or a [*toolerr.Error] with the given code (the executor
// passes [toolerr.InvalidParameters] for input, [toolerr.InvalidOutput] for
// output). The error's issues are sanitised: a stable issue code per failure
// kind (see [IssueCodes]) and the failing instance location, sorted, at most
// [toolerr.MaxIssues] kept with IssueCount the total. No value from doc, no
// validator message and no schema location is ever part of it; a property
// name enters a path only through [toolerr.NewIssue], which redacts unsafe
// names.
//
// String lengths count Unicode code points. Numbers may be json.Number.
//
// A flat schema (fast.go) is checked by hand first: a document the flat
// check accepts is valid without running the validator, any other is
// validated in full.
func (v *Validator) Validate(doc any, code toolerr.Code) error {
	if v.flat != nil && v.flat.accepts(doc) {
		return nil
	}
	err := v.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return toolerr.New(code, toolerr.NewIssue(IssueInvalid))
	}
	ls := flatten(ve, doc)
	issues := make([]toolerr.Issue, len(ls))
	for i, l := range ls {
		issues[i] = toolerr.NewIssue(l.code, l.loc...)
	}
	// Sorted after sanitising, so that the order of redacted names (which
	// may be caller data) cannot be inferred from the order of issues.
	slices.SortFunc(issues, func(a, b toolerr.Issue) int {
		return cmp.Or(slices.CompareFunc(a.Path, b.Path, compareSegment), cmp.Compare(a.Code, b.Code))
	})
	return toolerr.New(code, issues...)
}

// The issue codes of [Validator.Validate], one per failure kind of the
// validator.
const (
	IssueType                 = "type"
	IssueRequired             = "required"
	IssueAdditionalProperties = "additional_properties"
	IssueConst                = "const"
	IssueEnum                 = "enum"
	IssueMinLength            = "min_length"
	IssueMaxLength            = "max_length"
	IssuePattern              = "pattern"
	IssueFormat               = "format"
	IssueMinimum              = "minimum"
	IssueMaximum              = "maximum"
	IssueExclusiveMinimum     = "exclusive_minimum"
	IssueExclusiveMaximum     = "exclusive_maximum"
	IssueMultipleOf           = "multiple_of"
	IssueMinItems             = "min_items"
	IssueMaxItems             = "max_items"
	IssueUniqueItems          = "unique_items"
	IssueAdditionalItems      = "additional_items"
	IssueContains             = "contains"
	IssueMinContains          = "min_contains"
	IssueMaxContains          = "max_contains"
	IssueMinProperties        = "min_properties"
	IssueMaxProperties        = "max_properties"
	IssueDependentRequired    = "dependent_required"
	IssuePropertyNames        = "property_names"
	IssueNot                  = "not"
	IssueOneOf                = "one_of"
	IssueAnyOf                = "any_of"
	IssueNotAllowed           = "not_allowed"
	IssueContent              = "content"
	IssueInvalid              = "invalid"
)

// IssueCodes lists every issue code [Validator.Validate] can return.
var IssueCodes = []string{
	IssueType, IssueRequired, IssueAdditionalProperties, IssueConst, IssueEnum,
	IssueMinLength, IssueMaxLength, IssuePattern, IssueFormat,
	IssueMinimum, IssueMaximum, IssueExclusiveMinimum, IssueExclusiveMaximum, IssueMultipleOf,
	IssueMinItems, IssueMaxItems, IssueUniqueItems, IssueAdditionalItems,
	IssueContains, IssueMinContains, IssueMaxContains,
	IssueMinProperties, IssueMaxProperties, IssueDependentRequired, IssuePropertyNames,
	IssueNot, IssueOneOf, IssueAnyOf, IssueNotAllowed, IssueContent, IssueInvalid,
}

// leaf is one failure: its issue code and the raw instance location.
type leaf struct {
	code string
	loc  []string
}

// flatten returns the leaf failures under ve without duplicates (a failure
// reached through several branches counts once). doc is the validated
// document.
func flatten(ve *jsonschema.ValidationError, doc any) []leaf {
	ls := flattener{doc}.leaves(ve, nil)
	slices.SortFunc(ls, func(a, b leaf) int {
		return cmp.Or(slices.Compare(a.loc, b.loc), cmp.Compare(a.code, b.code))
	})
	return slices.CompactFunc(ls, func(a, b leaf) bool {
		return a.code == b.code && slices.Equal(a.loc, b.loc)
	})
}

// sortedLeaves is flatten sorted by location, array indices numerically.
func sortedLeaves(ve *jsonschema.ValidationError, doc any) []leaf {
	ls := flatten(ve, doc)
	slices.SortStableFunc(ls, func(a, b leaf) int {
		return cmp.Or(slices.CompareFunc(a.loc, b.loc, compareSegment), cmp.Compare(a.code, b.code))
	})
	return ls
}

// compareSegment orders array indices numerically and before names.
func compareSegment(a, b string) int {
	ai, aok := arrayIndex(a)
	bi, bok := arrayIndex(b)
	switch {
	case aok && bok:
		return cmp.Compare(ai, bi)
	case aok:
		return -1
	case bok:
		return 1
	}
	return cmp.Compare(a, b)
}

// flattener turns the validator's tree of causes into leaves.
type flattener struct {
	doc any // the validated document
}

// leaves appends the leaf failures under ve to out.
func (f flattener) leaves(ve *jsonschema.ValidationError, out []leaf) []leaf {
	loc := ve.InstanceLocation
	named := func(code string, names []string) []leaf {
		for _, n := range names {
			out = append(out, leaf{code, child(loc, n)})
		}
		return out
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		if len(ve.Causes) == 0 {
			return append(out, leaf{IssueInvalid, child(loc)})
		}
		for _, c := range ve.Causes {
			out = f.leaves(c, out)
		}
		return out
	case *kind.AnyOf:
		return f.union(ve, IssueAnyOf, out)
	case *kind.OneOf:
		if len(k.Subschemas) > 0 { // more than one matched
			return append(out, leaf{IssueOneOf, child(loc)})
		}
		return f.union(ve, IssueOneOf, out)
	case *kind.Required:
		return named(IssueRequired, k.Missing)
	case *kind.AdditionalProperties:
		return named(IssueAdditionalProperties, k.Properties)
	case *kind.DependentRequired:
		return named(IssueDependentRequired, k.Missing)
	case *kind.Dependency:
		return named(IssueDependentRequired, k.Missing)
	case *kind.PropertyNames:
		return append(out, leaf{IssuePropertyNames, f.propertyNameLoc(loc, k.Property)})
	}
	return append(out, leaf{issueCode(ve.ErrorKind), child(loc)})
}

// union appends the leaves of a failed anyOf or oneOf. A branch whose
// failures show it was never meant for the value — a type, const or enum
// mismatch at the union's location, or a const mismatch at a direct
// property (a discriminator such as "operation", which Pydantic and invopop
// emit as const) — is left out when another branch remains; when every
// branch is such, the single issue is code at the union's location. So a
// discriminated union reports the failures of the variant the caller chose,
// and Optional[int] given "x" reports one any_of, not "not an integer" and
// "not null".
func (f flattener) union(ve *jsonschema.ValidationError, code string, out []leaf) []leaf {
	loc := ve.InstanceLocation
	var kept []leaf
	for _, c := range ve.Causes {
		branch := f.leaves(c, nil)
		if !excluded(branch, loc) {
			kept = append(kept, branch...)
		}
	}
	if len(kept) == 0 {
		return append(out, leaf{code, child(loc)})
	}
	return append(out, kept...)
}

func excluded(branch []leaf, loc []string) bool {
	for _, l := range branch {
		at := slices.Equal(l.loc, loc)
		below := len(l.loc) == len(loc)+1 && slices.Equal(l.loc[:len(loc)], loc)
		switch l.code {
		case IssueType, IssueEnum:
			if at {
				return true
			}
		case IssueConst:
			if at || below {
				return true
			}
		}
	}
	return false
}

// propertyNameLoc returns the location of a property name refused by
// propertyNames. jsonschema v6.0.3 stores that error's location without
// copying it, so a later sibling's location can overwrite it (upstream issue
// #258, pull request #269): the reported location is only a hint. The
// location is the reported one when the document has an object there with
// that property, else the only object at that depth with that property,
// else the document root.
func (f flattener) propertyNameLoc(hint []string, name string) []string {
	has := func(v any) bool {
		obj, ok := v.(map[string]any)
		if ok {
			_, ok = obj[name]
		}
		return ok
	}
	if v, ok := resolve(f.doc, hint); ok && has(v) {
		return child(hint, name)
	}
	var found [][]string
	var stack []string
	var search func(v any)
	search = func(v any) {
		if len(found) > 1 {
			return
		}
		if len(stack) == len(hint) {
			if has(v) {
				found = append(found, child(stack, name))
			}
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				stack = append(stack, k)
				search(e)
				stack = stack[:len(stack)-1]
			}
		case []any:
			for i, e := range v {
				stack = append(stack, strconv.Itoa(i))
				search(e)
				stack = stack[:len(stack)-1]
			}
		}
	}
	search(f.doc)
	if len(found) == 1 {
		return found[0]
	}
	return []string{}
}

// issueCode maps a leaf kind to its issue code.
func issueCode(k jsonschema.ErrorKind) string {
	switch k.(type) {
	case *kind.Type:
		return IssueType
	case *kind.Const:
		return IssueConst
	case *kind.Enum:
		return IssueEnum
	case *kind.MinLength:
		return IssueMinLength
	case *kind.MaxLength:
		return IssueMaxLength
	case *kind.Pattern:
		return IssuePattern
	case *kind.Format:
		return IssueFormat
	case *kind.Minimum:
		return IssueMinimum
	case *kind.Maximum:
		return IssueMaximum
	case *kind.ExclusiveMinimum:
		return IssueExclusiveMinimum
	case *kind.ExclusiveMaximum:
		return IssueExclusiveMaximum
	case *kind.MultipleOf:
		return IssueMultipleOf
	case *kind.MinItems:
		return IssueMinItems
	case *kind.MaxItems:
		return IssueMaxItems
	case *kind.UniqueItems:
		return IssueUniqueItems
	case *kind.AdditionalItems:
		return IssueAdditionalItems
	case *kind.Contains:
		return IssueContains
	case *kind.MinContains:
		return IssueMinContains
	case *kind.MaxContains:
		return IssueMaxContains
	case *kind.MinProperties:
		return IssueMinProperties
	case *kind.MaxProperties:
		return IssueMaxProperties
	case *kind.Not:
		return IssueNot
	case *kind.FalseSchema:
		return IssueNotAllowed
	case *kind.ContentEncoding, *kind.ContentMediaType, *kind.ContentSchema:
		return IssueContent
	}
	return IssueInvalid
}
