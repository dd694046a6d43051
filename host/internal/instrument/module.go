package instrument

import (
	"bytes"
	"fmt"
)

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

var sectionNames = [...]string{
	secCustom: "custom", secType: "type", secImport: "import", secFunction: "function",
	secTable: "table", secMemory: "memory", secGlobal: "global", secExport: "export",
	secStart: "start", secElement: "element", secCode: "code", secData: "data",
	secDataCount: "data count", secTag: "tag",
}

// sectionRank gives the position a non-custom section must have: ids are
// not in file order (data count sits between element and code).
func sectionRank(id byte) int {
	switch id {
	case secDataCount:
		return 2*secElement + 1
	case secCode, secData:
		return 2*int(id) + 2
	default:
		return 2 * int(id)
	}
}

// Value and reference types.
const (
	typeI32       = 0x7f
	typeI64       = 0x7e
	typeF32       = 0x7d
	typeF64       = 0x7c
	typeV128      = 0x7b
	typeFuncref   = 0x70
	typeExternref = 0x6f
)

// Limits on what the rewriter accepts.
const (
	// maxLocals bounds the locals of one function, parameters included.
	// It is the limit engines such as V8 and Wasmtime apply.
	maxLocals = 50000
	// maxNesting bounds the depth of nested blocks in one function. Go's
	// wasip1 output nests a few hundred deep; wazero's compile time grows
	// with the square of the depth (about 1.5 s at this bound, 40 s at 1<<16).
	maxNesting = 1 << 14
	// maxPages is the most pages a 32-bit memory can declare.
	maxPages = 65536
)

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

type rawSection struct {
	id         byte
	start, end int  // payload range in the input
	drop       bool // a custom section left out of the output
}

type importEntry struct {
	Import
	index   uint32 // the function's type, or unused
	limits  Limits // memory
	global  globalType
	tableRT byte
}

type globalType struct {
	valType byte
	mutable bool
}

type globalEntry struct {
	globalType
	init []byte // constant expression including its end opcode
}

type tableEntry struct {
	refType byte
	limits  Limits
}

// module is the decoded structure of a module: the sections the rewriter
// changes are decoded, the others are kept as ranges of the input.
type module struct {
	wasm     []byte
	sections []rawSection

	numParams []uint32 // per type: its parameter count
	imports   []importEntry

	importedFuncs, importedTables, importedMems, importedGlobals uint32

	funcTypes []uint32 // per defined function: its type index
	tables    []tableEntry
	mems      []Limits
	globals   []globalEntry
	exports   []Export

	code []rawSection // per defined function: its body

	numElems    uint32 // element segments
	numData     uint32 // data segments
	passiveData bool   // some data segment is passive
	hasStart    bool   // a start section
	dataCount   uint32 // the data count section's value, if hasDataCount
	hasDataCnt  bool
	hasNames    bool     // a name section was kept
	droppedCust []string // names of the custom sections dropped

	mode int     // metering mode, see modeAuto
	opts Options // the structure limits, defaults set
}

func (m *module) numFuncs() uint32   { return m.importedFuncs + uint32(len(m.funcTypes)) }
func (m *module) numTables() uint32  { return m.importedTables + uint32(len(m.tables)) }
func (m *module) numMems() uint32    { return m.importedMems + uint32(len(m.mems)) }
func (m *module) numGlobals() uint32 { return m.importedGlobals + uint32(len(m.globals)) }

// decodeWith splits wasm into sections and decodes those the rewriter
// changes, under the structure limits of opts, which has its defaults set.
func decodeWith(wasm []byte, opts Options) (*module, error) {
	if len(wasm) < len(magic) || !bytes.Equal(wasm[:4], magic[:4]) {
		return nil, fmt.Errorf("reading header: no WebAssembly magic number: %w", ErrMalformed)
	}
	if !bytes.Equal(wasm[4:8], magic[4:]) {
		return nil, fmt.Errorf("reading header: binary format version %x: %w", wasm[4:8], ErrUnsupported)
	}
	m := &module{wasm: wasm, opts: opts}
	r := newReader(wasm, len(magic), len(wasm))
	lastRank := 0
	hasCode := false
	for r.remaining() > 0 {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("reading section header: %w", err)
		}
		if int64(size) > int64(r.remaining()) {
			return nil, fmt.Errorf("reading section header: %w", r.errorf(ErrMalformed, "section of %d bytes runs past the end of the module", size))
		}
		s := rawSection{id: id, start: r.pos, end: r.pos + int(size)}
		r.pos = s.end
		if id > secTag {
			return nil, fmt.Errorf("reading section header: unknown section id %d: %w", id, ErrMalformed)
		}
		name := sectionNames[id]
		if id == secTag {
			return nil, fmt.Errorf("decoding tag section: exception handling: %w", ErrUnsupported)
		}
		if id != secCustom {
			rank := sectionRank(id)
			if rank <= lastRank {
				return nil, fmt.Errorf("decoding %s section: duplicate or out of order: %w", name, ErrMalformed)
			}
			lastRank = rank
		}
		m.sections = append(m.sections, s)
		sr := newReader(wasm, s.start, s.end)
		switch id {
		case secCustom:
			var cname string
			if cname, err = sr.name(); err == nil && cname == "name" {
				if m.hasNames || !validNameSection(sr) {
					m.sections[len(m.sections)-1].drop = true
					m.droppedCust = append(m.droppedCust, cname)
				}
				m.hasNames = true
			}
			sr.pos = sr.end
		case secType:
			err = m.decodeTypes(sr)
		case secImport:
			err = m.decodeImports(sr)
		case secFunction:
			err = m.decodeFunctions(sr)
		case secTable:
			err = m.decodeTables(sr)
		case secMemory:
			err = m.decodeMemories(sr)
		case secGlobal:
			err = m.decodeGlobals(sr)
		case secExport:
			err = m.decodeExports(sr)
		case secCode:
			hasCode = true
			err = m.decodeCode(sr)
		case secStart:
			m.hasStart = true
			err = m.decodeStart(sr)
		case secElement:
			err = m.decodeElements(sr)
		case secDataCount:
			m.hasDataCnt = true
			m.dataCount, err = sr.u32()
		case secData:
			err = m.decodeData(sr)
		}
		if err == nil && sr.remaining() != 0 {
			err = sr.errorf(ErrMalformed, "%d unread bytes at the end of the section", sr.remaining())
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s section: %w", name, err)
		}
	}
	if !hasCode && len(m.funcTypes) != 0 {
		return nil, fmt.Errorf("decoding code section: %d functions declared but no code section: %w", len(m.funcTypes), ErrMalformed)
	}
	if m.hasDataCnt && m.dataCount != m.numData {
		return nil, fmt.Errorf("decoding data section: %d segments, the data count section says %d: %w", m.numData, m.dataCount, ErrMalformed)
	}
	return m, nil
}

// The start, element and data sections are decoded only to check them: they
// are copied unchanged, since no index they hold moves. The check keeps the
// compiler that reads the output from allocating on a count that the bytes
// cannot back.

func (m *module) decodeStart(r *reader) error {
	x, err := r.u32()
	if err == nil && x >= m.numFuncs() {
		err = r.errorf(ErrMalformed, "start function %d out of range", x)
	}
	return err
}

func (m *module) decodeElements(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := m.decodeElement(r); err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
	}
	m.numElems = uint32(n)
	return nil
}

func (m *module) decodeElement(r *reader) error {
	flags, err := r.u32()
	if err != nil {
		return err
	}
	if flags > 7 {
		return r.errorf(ErrMalformed, "element segment flags %#x", flags)
	}
	active := flags&1 == 0
	if active {
		table := uint32(0)
		if flags&2 != 0 {
			if table, err = r.u32(); err != nil {
				return err
			}
		}
		if table >= m.numTables() {
			return r.errorf(ErrMalformed, "table index %d out of range", table)
		}
		if _, err := m.readConstExpr(r); err != nil {
			return err
		}
	}
	exprs := flags&4 != 0
	if flags&3 != 0 { // an element kind or reference type
		if exprs {
			_, err = readRefType(r)
		} else if kind, kerr := r.byte(); kerr != nil {
			err = kerr
		} else if kind != 0 {
			err = r.errorf(ErrMalformed, "element kind %#x", kind)
		}
		if err != nil {
			return err
		}
	}
	k, err := r.count(1)
	if err != nil {
		return err
	}
	for j := 0; j < k; j++ {
		if exprs {
			_, err = m.readConstExpr(r)
		} else {
			var x uint32
			if x, err = r.u32(); err == nil && x >= m.numFuncs() {
				err = r.errorf(ErrMalformed, "function index %d out of range", x)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *module) decodeData(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		flags, err := r.u32()
		if err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
		switch flags {
		case 0, 2:
			if flags == 2 {
				if err = m.memIndex(r); err != nil {
					return fmt.Errorf("segment %d: %w", i, err)
				}
			}
			if m.numMems() == 0 {
				return fmt.Errorf("segment %d: active data without a memory: %w", i, ErrMalformed)
			}
			if _, err = m.readConstExpr(r); err != nil {
				return fmt.Errorf("segment %d: %w", i, err)
			}
		case 1:
			m.passiveData = true
		default:
			return fmt.Errorf("segment %d: %w", i, r.errorf(ErrMalformed, "data segment flags %#x", flags))
		}
		size, err := r.u32()
		if err == nil {
			err = r.skip(int(size))
		}
		if err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
	}
	m.numData = uint32(n)
	return nil
}

// validNameSection reports whether the rest of r is a name section whose
// module, function and local name subsections each parse exactly within
// their declared sizes. Other subsections are skipped by size.
func validNameSection(r *reader) bool {
	for r.remaining() > 0 {
		id, err := r.byte()
		if err != nil {
			return false
		}
		size, err := r.u32()
		if err != nil || int64(size) > int64(r.remaining()) {
			return false
		}
		sub := newReader(r.buf, r.pos, r.pos+int(size))
		r.pos = sub.end
		switch id {
		case 0:
			_, err = sub.name()
		case 1:
			err = readNameMap(sub)
		case 2:
			var n int
			if n, err = sub.count(2); err != nil {
				return false
			}
			for i := 0; i < n && err == nil; i++ {
				if _, err = sub.u32(); err == nil {
					err = readNameMap(sub)
				}
			}
		default:
			sub.pos = sub.end
		}
		if err != nil || sub.remaining() != 0 {
			return false
		}
	}
	return true
}

func readNameMap(r *reader) error {
	n, err := r.count(2)
	for i := 0; i < n && err == nil; i++ {
		if _, err = r.u32(); err == nil {
			_, err = r.name()
		}
	}
	return err
}

func (m *module) decodeTypes(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	m.numParams = make([]uint32, 0, n)
	for i := 0; i < n; i++ {
		form, err := r.byte()
		if err != nil {
			return err
		}
		switch form {
		case 0x60:
		case 0x4e, 0x4f, 0x50, 0x5e, 0x5f:
			return fmt.Errorf("type %d: form %#x: garbage collection types: %w", i, form, ErrUnsupported)
		default:
			return fmt.Errorf("type %d: %w", i, r.errorf(ErrMalformed, "unknown type form %#x", form))
		}
		var params uint32
		for j := 0; j < 2; j++ {
			k, err := r.count(1)
			if err != nil {
				return fmt.Errorf("type %d: %w", i, err)
			}
			for ; k > 0; k-- {
				if _, err := readValType(r); err != nil {
					return fmt.Errorf("type %d: %w", i, err)
				}
				if j == 0 {
					params++
				}
			}
		}
		m.numParams = append(m.numParams, params)
	}
	return nil
}

func readValType(r *reader) (byte, error) {
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch b {
	case typeI32, typeI64, typeF32, typeF64, typeV128, typeFuncref, typeExternref:
		return b, nil
	}
	r.pos--
	if b >= 0x60 && b < 0x80 {
		return 0, r.errorf(ErrUnsupported, "value type %#x (typed references or GC)", b)
	}
	return 0, r.errorf(ErrMalformed, "unknown value type %#x", b)
}

func readRefType(r *reader) (byte, error) {
	t, err := readValType(r)
	if err != nil {
		return 0, err
	}
	if t != typeFuncref && t != typeExternref {
		r.pos--
		return 0, r.errorf(ErrMalformed, "value type %#x is not a reference type", t)
	}
	return t, nil
}

func readLimits(r *reader, what string) (Limits, error) {
	flag, err := r.byte()
	if err != nil {
		return Limits{}, err
	}
	var l Limits
	switch flag {
	case 0x00, 0x01:
	case 0x02, 0x03:
		r.pos--
		return l, r.errorf(ErrUnsupported, "shared %s (threads)", what)
	case 0x04, 0x05, 0x06, 0x07:
		r.pos--
		return l, r.errorf(ErrUnsupported, "64-bit %s", what)
	default:
		r.pos--
		return l, r.errorf(ErrMalformed, "unknown limits flag %#x", flag)
	}
	if l.Min, err = r.u32(); err != nil {
		return l, err
	}
	if flag == 0x01 {
		if l.Max, err = r.u32(); err != nil {
			return l, err
		}
		l.HasMax = true
		if l.Max < l.Min {
			return l, r.errorf(ErrMalformed, "%s maximum %d below its minimum %d", what, l.Max, l.Min)
		}
	}
	return l, nil
}

func readMemoryLimits(r *reader) (Limits, error) {
	l, err := readLimits(r, "memory")
	if err != nil {
		return l, err
	}
	if l.Min > maxPages || (l.HasMax && l.Max > maxPages) {
		return l, r.errorf(ErrMalformed, "memory limits exceed %d pages", maxPages)
	}
	return l, nil
}

func readGlobalType(r *reader) (globalType, error) {
	t, err := readValType(r)
	if err != nil {
		return globalType{}, err
	}
	mut, err := r.byte()
	if err != nil {
		return globalType{}, err
	}
	if mut > 1 {
		r.pos--
		return globalType{}, r.errorf(ErrMalformed, "global mutability %#x", mut)
	}
	return globalType{valType: t, mutable: mut == 1}, nil
}

func (m *module) decodeImports(r *reader) error {
	n, err := r.count(4)
	if err != nil {
		return err
	}
	m.imports = make([]importEntry, 0, n)
	for i := 0; i < n; i++ {
		var e importEntry
		if e.Module, err = r.name(); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		if e.Name, err = r.name(); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		kind, err := r.byte()
		if err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		e.Kind = ExternKind(kind)
		switch e.Kind {
		case KindFunction:
			if e.index, err = r.u32(); err == nil && e.index >= uint32(len(m.numParams)) {
				err = r.errorf(ErrMalformed, "type index %d out of range", e.index)
			}
			m.importedFuncs++
		case KindTable:
			// Decoded so that the host can name it when it refuses it.
			if e.tableRT, err = readRefType(r); err == nil {
				e.limits, err = readLimits(r, "table")
			}
			m.importedTables++
		case KindMemory:
			e.limits, err = readMemoryLimits(r)
			m.importedMems++
		case KindGlobal:
			e.global, err = readGlobalType(r)
			m.importedGlobals++
		case 4:
			return fmt.Errorf("import %d (%s.%s): tag imports (exception handling): %w", i, e.Module, e.Name, ErrUnsupported)
		default:
			return fmt.Errorf("import %d: %w", i, r.errorf(ErrMalformed, "unknown import kind %#x", kind))
		}
		if err != nil {
			return fmt.Errorf("import %d (%s.%s): %w", i, e.Module, e.Name, err)
		}
		m.imports = append(m.imports, e)
	}
	if m.importedMems > 1 {
		return fmt.Errorf("%d imported memories: multiple memories: %w", m.importedMems, ErrUnsupported)
	}
	if err := m.checkCount(LimitFunctions, uint64(m.importedFuncs), uint64(m.opts.MaxFunctions)); err != nil {
		return err
	}
	return m.checkCount(LimitTables, uint64(m.importedTables), uint64(m.opts.MaxTables))
}

// checkCount refuses a module with more than max of what limit counts.
func (m *module) checkCount(limit string, n, max uint64) error {
	if n > max {
		return &LimitError{Limit: limit, Value: n, Max: max, Where: "module"}
	}
	return nil
}

func (m *module) decodeFunctions(r *reader) error {
	n, err := r.count(1)
	if err != nil {
		return err
	}
	if err := m.checkCount(LimitFunctions, uint64(m.importedFuncs)+uint64(n), uint64(m.opts.MaxFunctions)); err != nil {
		return err
	}
	m.funcTypes = make([]uint32, 0, n)
	for i := 0; i < n; i++ {
		t, err := r.u32()
		if err != nil {
			return fmt.Errorf("function %d: %w", i, err)
		}
		if t >= uint32(len(m.numParams)) {
			return fmt.Errorf("function %d: type index %d out of range: %w", i, t, ErrMalformed)
		}
		m.funcTypes = append(m.funcTypes, t)
	}
	return nil
}

func (m *module) decodeTables(r *reader) error {
	n, err := r.count(3)
	if err != nil {
		return err
	}
	if err := m.checkCount(LimitTables, uint64(m.importedTables)+uint64(n), uint64(m.opts.MaxTables)); err != nil {
		return err
	}
	m.tables = make([]tableEntry, 0, n)
	for i := 0; i < n; i++ {
		var t tableEntry
		if t.refType, err = readRefType(r); err == nil {
			t.limits, err = readLimits(r, "table")
		}
		if err != nil {
			return fmt.Errorf("table %d: %w", i, err)
		}
		m.tables = append(m.tables, t)
	}
	return nil
}

func (m *module) decodeMemories(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	if uint64(m.importedMems)+uint64(n) > 1 {
		return fmt.Errorf("%d memories: multiple memories: %w", uint64(m.importedMems)+uint64(n), ErrUnsupported)
	}
	for i := 0; i < n; i++ {
		l, err := readMemoryLimits(r)
		if err != nil {
			return fmt.Errorf("memory %d: %w", i, err)
		}
		m.mems = append(m.mems, l)
	}
	return nil
}

func (m *module) decodeGlobals(r *reader) error {
	n, err := r.count(4)
	if err != nil {
		return err
	}
	m.globals = make([]globalEntry, 0, n)
	for i := 0; i < n; i++ {
		var g globalEntry
		if g.globalType, err = readGlobalType(r); err == nil {
			g.init, err = m.readConstExpr(r)
		}
		if err != nil {
			return fmt.Errorf("global %d: %w", m.importedGlobals+uint32(i), err)
		}
		m.globals = append(m.globals, g)
	}
	return nil
}

// readConstExpr reads a constant expression up to and including its end
// opcode and returns its bytes.
func (m *module) readConstExpr(r *reader) ([]byte, error) {
	start := r.pos
	for {
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x0b:
			return r.buf[start:r.pos], nil
		case 0x41:
			_, err = r.sleb(32)
		case 0x42:
			_, err = r.sleb(64)
		case 0x43:
			err = r.skip(4)
		case 0x44:
			err = r.skip(8)
		case 0x23:
			var x uint32
			if x, err = r.u32(); err == nil && x >= m.numGlobals() {
				err = r.errorf(ErrMalformed, "global index %d out of range", x)
			}
		case 0xd0:
			_, err = readRefType(r)
		case 0xd2:
			var x uint32
			if x, err = r.u32(); err == nil && x >= m.numFuncs() {
				err = r.errorf(ErrMalformed, "function index %d out of range", x)
			}
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e:
			r.pos--
			return nil, r.errorf(ErrUnsupported, "opcode %#x in a constant expression (extended constant expressions)", op)
		case 0xfd: // v128.const, the one SIMD constant instruction
			at := r.pos - 1
			var sub uint32
			if sub, err = simdOpcode(r, at); err == nil && sub != simdV128Const {
				r.pos = at
				return nil, r.errorf(ErrMalformed, "opcode 0xfd %d not allowed in a constant expression", sub)
			}
			if err == nil {
				err = r.skip(16)
			}
		default:
			r.pos--
			return nil, r.errorf(ErrMalformed, "opcode %#x not allowed in a constant expression", op)
		}
		if err != nil {
			return nil, err
		}
	}
}

func (m *module) decodeExports(r *reader) error {
	n, err := r.count(3)
	if err != nil {
		return err
	}
	m.exports = make([]Export, 0, n)
	seen := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		var e Export
		if e.Name, err = r.name(); err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		kind, err := r.byte()
		if err != nil {
			return fmt.Errorf("export %d (%q): %w", i, e.Name, err)
		}
		e.Kind = ExternKind(kind)
		if e.Index, err = r.u32(); err != nil {
			return fmt.Errorf("export %d (%q): %w", i, e.Name, err)
		}
		var limit uint32
		switch e.Kind {
		case KindFunction:
			limit = m.numFuncs()
		case KindTable:
			limit = m.numTables()
		case KindMemory:
			limit = m.numMems()
		case KindGlobal:
			limit = m.numGlobals()
		case 4:
			return fmt.Errorf("export %d (%q): tag exports (exception handling): %w", i, e.Name, ErrUnsupported)
		default:
			return fmt.Errorf("export %d (%q): unknown export kind %#x: %w", i, e.Name, kind, ErrMalformed)
		}
		if e.Index >= limit {
			return fmt.Errorf("export %d (%q): %s index %d out of range: %w", i, e.Name, e.Kind, e.Index, ErrMalformed)
		}
		if seen[e.Name] {
			return fmt.Errorf("export %d: duplicate export name %q: %w", i, e.Name, ErrMalformed)
		}
		seen[e.Name] = true
		m.exports = append(m.exports, e)
	}
	return nil
}

func (m *module) decodeCode(r *reader) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	if n != len(m.funcTypes) {
		return fmt.Errorf("%d function bodies for %d declared functions: %w", n, len(m.funcTypes), ErrMalformed)
	}
	m.code = make([]rawSection, 0, n)
	for i := 0; i < n; i++ {
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("function %d: %w", m.importedFuncs+uint32(i), err)
		}
		start := r.pos
		if err := r.skip(int(size)); err != nil {
			return fmt.Errorf("function %d: %w", m.importedFuncs+uint32(i), err)
		}
		m.code = append(m.code, rawSection{id: secCode, start: start, end: r.pos})
	}
	return nil
}
