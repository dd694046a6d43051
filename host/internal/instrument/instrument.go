package instrument

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FuelGlobal is the export name of the fuel global: a mutable i64 the host
// sets to the budget before a call and reads after it. A value below zero
// after a trap means the trap was fuel exhaustion. The guest's own code
// cannot address it, nor the floor global after it.
const FuelGlobal = "toolhost.fuel"

// FloorGlobal is the export name of the floor global, the count below which
// a metering test calls the yield (see [YieldFuel]). The yield lowers it as
// the guest runs; it starts at [FloorStart], and a host that runs more than
// one call on an instance sets it back to FloorStart before each, so that
// every call yields at its first test, as a new instance's first call does.
const FloorGlobal = "toolhost.floor"

// FloorStart is the floor global's initial value: above any count.
const FloorStart = math.MaxInt64

// YieldFuel is how much fuel a guest uses between two calls of its yield
// function, the function Rewrite appends after all others (its index is
// Info.Functions). At a yield the guest leaves the compiled code for the
// engine's own and comes back (it grows its memory by nothing), which lets
// the Go runtime stop it for a garbage collection, and then traps if the
// fuel is spent. The yield is also where a host interrupts a running guest:
// a function listener on it (the host's, compiled into that one function)
// can end the call, and the fuel global is then not below zero, which tells
// the interruption from fuel exhaustion. A guest that never calls out
// therefore stalls a collection, and outlives an interruption, by at most
// the time it takes to use YieldFuel.
const YieldFuel = 1 << 20

// GlobalExportPrefix starts the export names given to defined globals by
// Options.ExportGlobals: "toolhost.global.<index>", the index in decimal.
const GlobalExportPrefix = "toolhost.global."

// reservedPrefix is the export namespace the rewriter owns.
const reservedPrefix = "toolhost."

// The structure limits used when the Options field of the same name is
// zero. They leave wide headroom over what real tools use; the bundled Go
// modules (docs/host.md, "Module limits") have at most 4,223 functions, one
// table of 8,291 elements, 6,556 br_table labels in one function and
// 186,533 in all (markup.wasm, 9 MB).
const (
	DefaultMaxTableElements      = 100_000
	DefaultMaxTotalTableElements = 1_000_000
	DefaultMaxTables             = 100
	// wazero compiles about 9 µs per (trivial) function.
	DefaultMaxFunctions = 200_000
	// wazero's compiler is quadratic in the branches to one block, and
	// each br_table label is one: a single br_table of 40,000 labels to
	// one block compiles in 0.56 s, 100,000 in over 6 s; spread over
	// many functions, labels cost about 5 µs each.
	DefaultMaxFunctionBrTableTargets = 32_768
	DefaultMaxBrTableTargets         = 2_000_000
	// wazero's compiler walks its dominator tree from every basic block
	// (see LimitDominatorDepths): 10,000 loops in a row, each with its
	// metering test, compile in 18 s. The depths are capped at 40 times
	// what the largest bundled function adds up to (393,392) and 8 times
	// the largest bundled module (8,201,326); the worst runs at the caps
	// compile in 0.05–0.4 s a function (docs/host.md).
	DefaultMaxFunctionDominatorDepths = 16_000_000
	DefaultMaxDominatorDepths         = 64_000_000
	// A block's predecessors cost the compiler their square (addPred);
	// the bundled modules have at most 3,278 ways into one label.
	DefaultMaxLabelBranches = 32_768
)

// TableElementBytes is what wazero holds per table element: a uintptr for
// each funcref or externref of every instance's table.
const TableElementBytes = 8

// Options configures Rewrite. The zero value meters fuel, applies the
// Default structure limits and leaves memory limits and globals alone.
// Each structure limit is checked before anything is sized by it, and a
// module over one is refused with a *[LimitError].
type Options struct {
	// ExportGlobals exports every defined global that the module does not
	// already export, under GlobalExportPrefix followed by its index.
	ExportGlobals bool

	// MaxTableElements caps the maximum of every table; zero means
	// DefaultMaxTableElements. A table whose initial size exceeds it is
	// refused (LimitTableElements).
	MaxTableElements uint32

	// MaxTotalTableElements caps the sum of all tables' maxima; zero means
	// DefaultMaxTotalTableElements. A module whose tables' initial sizes
	// add up to more is refused (LimitTableElements); otherwise the maxima
	// are lowered, table by table in index order, until their sum fits:
	// each table keeps its initial size and gets what the tables before it
	// left of the rest. Info.TableBytes is the most the tables can then
	// hold.
	MaxTotalTableElements uint64

	// MaxTables caps the number of tables, imported and defined; zero
	// means DefaultMaxTables (LimitTables).
	MaxTables uint32

	// MaxFunctions caps the number of functions, imported and defined;
	// zero means DefaultMaxFunctions (LimitFunctions). It is checked when
	// the function section is read, before the code is.
	MaxFunctions uint32

	// MaxFunctionBrTableTargets caps the br_table labels, each br_table's
	// default label included, of any one function; zero means
	// DefaultMaxFunctionBrTableTargets (LimitBrTableTargets). A br_table
	// is refused on its label count, before its labels are read.
	MaxFunctionBrTableTargets uint32

	// MaxBrTableTargets caps the br_table labels of the whole module, as
	// MaxFunctionBrTableTargets does those of one function; zero means
	// DefaultMaxBrTableTargets (LimitBrTableTargets).
	MaxBrTableTargets uint64

	// MaxFunctionDominatorDepths caps the depths of one function's basic
	// blocks in its dominator tree, added up (see [LimitDominatorDepths]);
	// zero means DefaultMaxFunctionDominatorDepths.
	MaxFunctionDominatorDepths uint64

	// MaxDominatorDepths caps the same sum over the whole module; zero
	// means DefaultMaxDominatorDepths.
	MaxDominatorDepths uint64

	// MaxLabelBranches caps the ways into any one label (see
	// [LimitLabelBranches]); zero means DefaultMaxLabelBranches.
	MaxLabelBranches uint32

	// MaxMemoryPages, when not zero, becomes the memory's maximum in pages
	// if the declared maximum is larger or absent. A memory whose minimum
	// exceeds it is refused with ErrLimits. At most 65536.
	MaxMemoryPages uint32

	// InitialFuel is the fuel global's initial value: the budget of the
	// module's start function, if it has one, which runs at instantiation
	// before the host can set the global. Zero makes any start function
	// trap on entry.
	InitialFuel int64

	// Image, when set, makes the output a pre-initialised module: the
	// state an instance reached after its initialiser ran, captured by
	// the host, becomes the module's initial state. See [Image].
	Image *Image
}

// Image is the state of an initialised instance, for [Options.Image]. The
// output module then initialises each defined global to its captured
// value, declares MemoryPages as its memory's minimum, and has no data
// segments and no start section: the host fills each new instance's memory
// with the captured bytes instead, and what the start function did is in
// them. A module with passive data segments, an imported memory, no
// memory, or a reference-typed defined global cannot be imaged
// (ErrUnsupported): its initial state is not all in memory and globals;
// nor can one with a v128 defined global, whose 128 bits Globals cannot
// hold.
type Image struct {
	// Globals holds every defined global's value by global index, as the
	// raw bits (the low 32 for i32 and f32) that wazero's api.Global.Get
	// returns.
	Globals map[uint32]uint64
	// MemoryPages is the memory's size after initialisation, in pages.
	MemoryPages uint32
}

// ExternKind is the kind of an import or export.
type ExternKind byte

// The import and export kinds.
const (
	KindFunction ExternKind = 0
	KindTable    ExternKind = 1
	KindMemory   ExternKind = 2
	KindGlobal   ExternKind = 3
)

// String returns the kind's name in the text format: func, table, memory
// or global.
func (k ExternKind) String() string {
	switch k {
	case KindFunction:
		return "func"
	case KindTable:
		return "table"
	case KindMemory:
		return "memory"
	case KindGlobal:
		return "global"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ValueType is a WebAssembly value type, by its binary encoding.
type ValueType byte

// The value types a rewritten module may use.
const (
	ValueTypeI32       ValueType = typeI32
	ValueTypeI64       ValueType = typeI64
	ValueTypeF32       ValueType = typeF32
	ValueTypeF64       ValueType = typeF64
	ValueTypeV128      ValueType = typeV128
	ValueTypeFuncref   ValueType = typeFuncref
	ValueTypeExternref ValueType = typeExternref
)

// String returns the type's name in the text format, such as "i64".
func (t ValueType) String() string {
	switch t {
	case ValueTypeI32:
		return "i32"
	case ValueTypeI64:
		return "i64"
	case ValueTypeF32:
		return "f32"
	case ValueTypeF64:
		return "f64"
	case ValueTypeV128:
		return "v128"
	case ValueTypeFuncref:
		return "funcref"
	case ValueTypeExternref:
		return "externref"
	}
	return fmt.Sprintf("valtype(%#x)", byte(t))
}

// Import is one import of the module.
type Import struct {
	Module, Name string
	Kind         ExternKind
}

// Export is one export of the input module. Index is in the space of its
// kind (imports first), which the rewrite does not change.
type Export struct {
	Name  string
	Kind  ExternKind
	Index uint32
}

// Limits are the size limits of a memory (in 64 KiB pages) or a table (in
// elements). Max is meaningful only when HasMax is set.
type Limits struct {
	Min    uint32
	Max    uint32
	HasMax bool
}

// Memory describes the module's linear memory.
type Memory struct {
	// Declared are the limits in the input, in pages.
	Declared Limits
	// Limits are the limits in the rewritten module, in pages.
	Limits Limits
	// Imported reports that the memory is imported rather than defined.
	Imported bool
	// Exported reports that the module exports it under the name "memory".
	Exported bool
}

// Table describes one defined table.
type Table struct {
	Index    uint32
	Type     ValueType
	Declared Limits // in the input, in elements
	Limits   Limits // in the rewritten module, in elements
}

// Global describes one global of the input module, imported or defined.
type Global struct {
	Index    uint32
	Type     ValueType
	Mutable  bool
	Imported bool
	// Export is the global's export name in the rewritten module: an
	// existing one, the name given by Options.ExportGlobals, or "" when the
	// global is not exported.
	Export string
}

// Info describes the input module and what Rewrite did to it.
type Info struct {
	Imports []Import
	Exports []Export // the input module's exports, in order
	Memory  *Memory  // nil when the module has no memory
	Tables  []Table  // defined tables
	Globals []Global // the input module's globals; the fuel and floor globals are not listed

	// FuelGlobal is the index of the fuel global, exported as FuelGlobal:
	// after the imported and defined globals. The unexported floor global,
	// the count below which a test yields, comes right after it.
	FuelGlobal uint32
	// MeteredFunctions is the number of function bodies instrumented (the
	// defined functions; imported functions are not metered).
	MeteredFunctions int
	// Functions is the number of functions, imported and defined, of the
	// input (the output adds the yield function).
	Functions int
	// BrTableTargets is the number of br_table labels in the module, each
	// br_table's default label included; FunctionBrTableTargets is the
	// most in one function.
	BrTableTargets, FunctionBrTableTargets uint64
	// DominatorDepths is the depths of the module's basic blocks added up
	// (see [LimitDominatorDepths]); FunctionDominatorDepths is the most in
	// one function.
	DominatorDepths, FunctionDominatorDepths uint64
	// LabelBranches is the most ways into one label (see
	// [LimitLabelBranches]).
	LabelBranches uint64
	// TableElements is the sum of the tables' maxima in the output, and
	// TableBytes what wazero holds when every table is at its maximum:
	// TableElements × TableElementBytes, per instance. Imported tables
	// count too.
	TableElements, TableBytes uint64
	// Start reports a start section: a function the module runs when it
	// is instantiated.
	Start bool
	// StateOps names the instructions of the module's code, in the order
	// of the text format's names, that change state outside memory and
	// globals: table.set, table.grow, table.fill, table.copy, table.init,
	// elem.drop and data.drop. An instance whose code has none keeps its
	// tables and segments as instantiation left them, so that setting its
	// memory and globals back is a full reset.
	StateOps []string
	// DroppedCustomSections names the custom sections left out of the
	// output: a "name" section that does not parse, or a second one. Every
	// other custom section is copied unchanged and in place.
	DroppedCustomSections []string
}

// Rewrite instruments the WebAssembly module wasm: it adds and exports the
// fuel global and meters every defined function, caps tables (and memory
// when opts asks), optionally exports the defined globals, and reports the
// module's imports, exports and limits. It does not modify wasm; out is a
// new slice. Custom sections are kept unchanged and in place, except a
// "name" section that does not parse (see Info.DroppedCustomSections).
//
// Errors wrap ErrMalformed, ErrUnsupported or ErrLimits with where the
// problem is. Rewrite never panics and allocates in proportion to len(wasm).
// It checks what it needs to rewrite soundly (structure, immediates, index
// ranges, block nesting) but is not a validator: a module it accepts may
// still be refused by the compiler, and then its output is refused too.
func Rewrite(wasm []byte, opts Options) (out []byte, info Info, err error) {
	return rewrite(wasm, opts, modeAuto)
}

// rewrite is Rewrite with the metering mode chosen; tests force each mode.
func rewrite(wasm []byte, opts Options, mode int) (out []byte, info Info, err error) {
	opts = opts.withDefaults()
	if opts.MaxMemoryPages > maxPages {
		return nil, Info{}, fmt.Errorf("options: MaxMemoryPages %d exceeds %d", opts.MaxMemoryPages, maxPages)
	}
	m, err := decodeWith(wasm, opts)
	if err != nil {
		return nil, Info{}, err
	}
	m.mode = mode
	info, err = m.plan(opts)
	if err != nil {
		return nil, Info{}, err
	}
	out, err = m.encode(&info, opts)
	if err != nil {
		return nil, Info{}, err
	}
	return out, info, nil
}

// withDefaults returns opts with each zero structure limit set to its
// default.
func (opts Options) withDefaults() Options {
	if opts.MaxTableElements == 0 {
		opts.MaxTableElements = DefaultMaxTableElements
	}
	if opts.MaxTotalTableElements == 0 {
		opts.MaxTotalTableElements = DefaultMaxTotalTableElements
	}
	if opts.MaxTables == 0 {
		opts.MaxTables = DefaultMaxTables
	}
	if opts.MaxFunctions == 0 {
		opts.MaxFunctions = DefaultMaxFunctions
	}
	if opts.MaxFunctionBrTableTargets == 0 {
		opts.MaxFunctionBrTableTargets = DefaultMaxFunctionBrTableTargets
	}
	if opts.MaxBrTableTargets == 0 {
		opts.MaxBrTableTargets = DefaultMaxBrTableTargets
	}
	if opts.MaxFunctionDominatorDepths == 0 {
		opts.MaxFunctionDominatorDepths = DefaultMaxFunctionDominatorDepths
	}
	if opts.MaxDominatorDepths == 0 {
		opts.MaxDominatorDepths = DefaultMaxDominatorDepths
	}
	if opts.MaxLabelBranches == 0 {
		opts.MaxLabelBranches = DefaultMaxLabelBranches
	}
	return opts
}

// plan fills Info and applies the caps to the decoded limits.
func (m *module) plan(opts Options) (Info, error) {
	var info Info
	exportedAs := make(map[[2]uint32]string, len(m.exports)) // {kind, index} → first name
	for _, e := range m.exports {
		if strings.HasPrefix(e.Name, reservedPrefix) {
			return info, fmt.Errorf("decoding export section: export name %q uses the reserved prefix %q: %w", e.Name, reservedPrefix, ErrUnsupported)
		}
		k := [2]uint32{uint32(e.Kind), e.Index}
		if _, ok := exportedAs[k]; !ok {
			exportedAs[k] = e.Name
		}
	}
	info.Exports = append([]Export(nil), m.exports...)

	capMemory := func(l *Limits) error {
		if opts.MaxMemoryPages == 0 {
			return nil
		}
		if l.Min > opts.MaxMemoryPages {
			return &LimitError{Limit: LimitMemoryPages, Value: uint64(l.Min), Max: uint64(opts.MaxMemoryPages), Where: "memory"}
		}
		if !l.HasMax || l.Max > opts.MaxMemoryPages {
			l.Max, l.HasMax = opts.MaxMemoryPages, true
		}
		return nil
	}
	memExported := false
	for _, e := range m.exports {
		if e.Kind == KindMemory && e.Name == "memory" {
			memExported = true
		}
	}

	// Tables: each maximum capped at MaxTableElements, then their sum at
	// MaxTotalTableElements (see Options).
	var tableMins uint64
	capTable := func(index uint32, l *Limits) error {
		if l.Min > opts.MaxTableElements {
			return &LimitError{Limit: LimitTableElements, Value: uint64(l.Min), Max: uint64(opts.MaxTableElements), Where: fmt.Sprintf("table %d", index)}
		}
		if !l.HasMax || l.Max > opts.MaxTableElements {
			l.Max, l.HasMax = opts.MaxTableElements, true
		}
		tableMins += uint64(l.Min)
		return nil
	}
	var tableIndex uint32
	for i := range m.imports {
		if im := &m.imports[i]; im.Kind == KindTable {
			if err := capTable(tableIndex, &im.limits); err != nil {
				return info, fmt.Errorf("import %s.%s: %w", im.Module, im.Name, err)
			}
			tableIndex++
		}
	}
	for i := range m.tables {
		t := &m.tables[i]
		declared := t.limits
		if err := capTable(tableIndex, &t.limits); err != nil {
			return info, err
		}
		info.Tables = append(info.Tables, Table{Index: tableIndex, Type: ValueType(t.refType), Declared: declared})
		tableIndex++
	}
	if tableMins > opts.MaxTotalTableElements {
		return info, &LimitError{Limit: LimitTableElements, Value: tableMins, Max: opts.MaxTotalTableElements, Where: "module's tables"}
	}
	slack := opts.MaxTotalTableElements - tableMins
	lower := func(l *Limits) {
		grow := min(uint64(l.Max-l.Min), slack)
		l.Max = l.Min + uint32(grow)
		slack -= grow
		info.TableElements += uint64(l.Max)
	}
	for i := range m.imports {
		if im := &m.imports[i]; im.Kind == KindTable {
			lower(&im.limits)
		}
	}
	for i := range m.tables {
		lower(&m.tables[i].limits)
		info.Tables[i].Limits = m.tables[i].limits
	}
	info.TableBytes = info.TableElements * TableElementBytes

	var globalIndex uint32
	for i := range m.imports {
		im := &m.imports[i]
		info.Imports = append(info.Imports, im.Import)
		switch im.Kind {
		case KindMemory:
			mem := &Memory{Declared: im.limits, Imported: true, Exported: memExported}
			if err := capMemory(&im.limits); err != nil {
				return info, fmt.Errorf("import %s.%s: %w", im.Module, im.Name, err)
			}
			mem.Limits = im.limits
			info.Memory = mem
		case KindGlobal:
			info.Globals = append(info.Globals, Global{
				Index: globalIndex, Type: ValueType(im.global.valType), Mutable: im.global.mutable,
				Imported: true, Export: exportedAs[[2]uint32{uint32(KindGlobal), globalIndex}],
			})
			globalIndex++
		}
	}
	for i := range m.mems {
		mem := &Memory{Declared: m.mems[i], Exported: memExported}
		if err := capMemory(&m.mems[i]); err != nil {
			return info, fmt.Errorf("memory %d: %w", i, err)
		}
		mem.Limits = m.mems[i]
		info.Memory = mem
	}
	for _, g := range m.globals {
		name := exportedAs[[2]uint32{uint32(KindGlobal), globalIndex}]
		if name == "" && opts.ExportGlobals {
			name = GlobalExportPrefix + strconv.FormatUint(uint64(globalIndex), 10)
		}
		info.Globals = append(info.Globals, Global{
			Index: globalIndex, Type: ValueType(g.valType), Mutable: g.mutable, Export: name,
		})
		globalIndex++
	}
	if opts.Image != nil {
		if err := m.checkImage(opts.Image, info); err != nil {
			return info, err
		}
	}
	info.FuelGlobal = globalIndex
	info.Start = m.hasStart
	info.MeteredFunctions = len(m.funcTypes)
	info.Functions = int(m.numFuncs())
	info.DroppedCustomSections = m.droppedCust
	return info, nil
}
