// Encoding the rewritten module: each section of the plan written out,
// with the fuel global, the exported globals and, for a pre-initialised
// image, the captured initialisers and memory.

package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// encode writes the rewritten module.
func (m *module) encode(info *Info, opts Options) ([]byte, error) {
	out := make([]byte, 0, len(m.wasm)+len(m.wasm)/4+64)
	out = append(out, magic...)
	var payload []byte
	writeSection := func(id byte, p []byte) {
		out = append(out, id)
		out = appendULEB(out, uint64(len(p)))
		out = append(out, p...)
	}
	// The global and export sections are always written, and a memory
	// section for a module with code but no memory (the yield function
	// grows a memory); if the input has none they go where they belong
	// among the others.
	wroteGlobal, wroteExport := false, false
	wroteMemory := !m.addsMemory()
	flushBefore := func(rank int) {
		if !wroteMemory && rank > sectionRank(secMemory) {
			writeSection(secMemory, m.encodeMemories(payload[:0]))
			wroteMemory = true
		}
		if !wroteGlobal && rank > sectionRank(secGlobal) {
			writeSection(secGlobal, m.encodeGlobals(payload[:0], info, opts))
			wroteGlobal = true
		}
		if !wroteExport && rank > sectionRank(secExport) {
			writeSection(secExport, m.encodeExports(payload[:0], info))
			wroteExport = true
		}
	}
	for _, s := range m.sections {
		raw := m.wasm[s.start:s.end]
		if s.id == secCustom {
			if !s.drop {
				writeSection(s.id, raw)
			}
			continue
		}
		flushBefore(sectionRank(s.id))
		switch s.id {
		case secImport:
			payload = m.encodeImports(payload[:0])
		case secTable:
			payload = m.encodeTables(payload[:0])
		case secMemory:
			payload = m.encodeMemories(payload[:0])
			wroteMemory = true
		case secGlobal:
			payload = m.encodeGlobals(payload[:0], info, opts)
			wroteGlobal = true
		case secStart:
			if opts.Image == nil {
				writeSection(s.id, raw)
			}
			// The image holds what the start function did.
			continue
		case secData, secDataCount:
			if opts.Image == nil {
				writeSection(s.id, raw)
				continue
			}
			// The image holds memory's contents: no segment is applied.
			payload = appendULEB(payload[:0], 0)
		case secExport:
			payload = m.encodeExports(payload[:0], info)
			wroteExport = true
		case secType, secFunction:
			if len(m.code) == 0 {
				writeSection(s.id, raw)
				continue
			}
			// The yield function's type, () → (), and its entry.
			extra := []byte{0x60, 0, 0}
			if s.id == secFunction {
				extra = appendULEB(nil, uint64(len(m.numParams)))
			}
			var err error
			if payload, err = appendVector(payload[:0], raw, extra...); err != nil {
				return nil, fmt.Errorf("encoding %s section: %w", sectionNames[s.id], err)
			}
		case secCode:
			if len(m.code) == 0 {
				writeSection(s.id, raw)
				continue
			}
			var err error
			if payload, err = m.encodeCode(payload[:0], info); err != nil {
				return nil, err
			}
		default:
			writeSection(s.id, raw)
			continue
		}
		writeSection(s.id, payload)
	}
	flushBefore(sectionRank(secData) + 1)
	return out, nil
}

func (m *module) encodeImports(p []byte) []byte {
	p = appendULEB(p, uint64(len(m.imports)))
	for _, im := range m.imports {
		p = appendName(p, im.Module)
		p = appendName(p, im.Name)
		p = append(p, byte(im.Kind))
		switch im.Kind {
		case KindFunction:
			p = appendULEB(p, uint64(im.index))
		case KindTable:
			p = append(p, im.tableRT)
			p = appendLimits(p, im.limits)
		case KindMemory:
			p = appendLimits(p, im.limits)
		case KindGlobal:
			p = appendGlobalType(p, im.global)
		}
	}
	return p
}

func appendLimits(p []byte, l Limits) []byte {
	if !l.HasMax {
		p = append(p, 0x00)
		return appendULEB(p, uint64(l.Min))
	}
	p = append(p, 0x01)
	p = appendULEB(p, uint64(l.Min))
	return appendULEB(p, uint64(l.Max))
}

func appendGlobalType(p []byte, g globalType) []byte {
	mut := byte(0)
	if g.mutable {
		mut = 1
	}
	return append(p, g.valType, mut)
}

func (m *module) encodeTables(p []byte) []byte {
	p = appendULEB(p, uint64(len(m.tables)))
	for _, t := range m.tables {
		p = append(p, t.refType)
		p = appendLimits(p, t.limits)
	}
	return p
}

// checkImage refuses an image the module cannot take.
func (m *module) checkImage(img *Image, info Info) error {
	switch {
	case m.passiveData:
		return fmt.Errorf("imaging: the module has passive data segments: %w", ErrUnsupported)
	case len(m.mems) != 1:
		return fmt.Errorf("imaging: the module does not define exactly one memory: %w", ErrUnsupported)
	case img.MemoryPages < m.mems[0].Min || (m.mems[0].HasMax && img.MemoryPages > m.mems[0].Max):
		return fmt.Errorf("imaging: %d pages is outside the memory's limits: %w", img.MemoryPages, ErrLimits)
	}
	for i, g := range m.globals {
		index := m.importedGlobals + uint32(i)
		switch g.valType {
		case typeI32, typeI64, typeF32, typeF64:
		case typeV128:
			// Image.Globals holds 64 bits a global.
			return fmt.Errorf("imaging: global %d has type v128: %w", index, ErrUnsupported)
		default:
			return fmt.Errorf("imaging: global %d has a reference type: %w", index, ErrUnsupported)
		}
		if _, ok := img.Globals[index]; !ok {
			return fmt.Errorf("imaging: no value for global %d: %w", index, ErrMalformed)
		}
	}
	m.mems[0].Min = img.MemoryPages
	return nil
}

// appendConst appends a constant expression of type t holding bits.
func appendConst(p []byte, t byte, bits uint64) []byte {
	const (
		i32Const = 0x41
		f32Const = 0x43
		f64Const = 0x44
	)
	switch t {
	case typeI32:
		p = append(p, i32Const)
		p = appendSLEB(p, int64(int32(uint32(bits))))
	case typeI64:
		p = append(p, opI64Const)
		p = appendSLEB(p, int64(bits))
	case typeF32:
		p = append(p, f32Const)
		p = binary.LittleEndian.AppendUint32(p, uint32(bits))
	case typeF64:
		p = append(p, f64Const)
		p = binary.LittleEndian.AppendUint64(p, bits)
	}
	return append(p, opEnd)
}

// addsMemory reports whether the output defines a memory the input does
// not: a module with code and no memory gets one of 0 pages, at most 0,
// for the yield function to grow by nothing. No memory index moves: there
// was none.
func (m *module) addsMemory() bool { return len(m.code) > 0 && m.numMems() == 0 }

func (m *module) encodeMemories(p []byte) []byte {
	mems := m.mems
	if m.addsMemory() {
		mems = append(slices.Clip(mems), Limits{HasMax: true})
	}
	p = appendULEB(p, uint64(len(mems)))
	for _, l := range mems {
		p = appendLimits(p, l)
	}
	return p
}

func (m *module) encodeGlobals(p []byte, info *Info, opts Options) []byte {
	p = appendULEB(p, uint64(len(m.globals)+2))
	for i, g := range m.globals {
		p = appendGlobalType(p, g.globalType)
		if opts.Image != nil {
			p = appendConst(p, g.valType, opts.Image.Globals[m.importedGlobals+uint32(i)])
			continue
		}
		p = append(p, g.init...)
	}
	p = appendGlobalType(p, globalType{valType: typeI64, mutable: true})
	p = append(p, opI64Const)
	p = appendSLEB(p, opts.InitialFuel)
	p = append(p, opEnd)
	// The floor starts above any count, so that the first test yields and
	// sets it from the fuel the host gave.
	p = appendGlobalType(p, globalType{valType: typeI64, mutable: true})
	p = append(p, opI64Const)
	p = appendSLEB(p, FloorStart)
	return append(p, opEnd)
}

func (m *module) encodeExports(p []byte, info *Info) []byte {
	var added int
	for _, g := range info.Globals {
		if !g.Imported && strings.HasPrefix(g.Export, GlobalExportPrefix) {
			added++
		}
	}
	p = appendULEB(p, uint64(len(m.exports)+2+added))
	appendExport := func(name string, kind ExternKind, index uint32) {
		p = appendName(p, name)
		p = append(p, byte(kind))
		p = appendULEB(p, uint64(index))
	}
	for _, e := range m.exports {
		appendExport(e.Name, e.Kind, e.Index)
	}
	appendExport(FuelGlobal, KindGlobal, info.FuelGlobal)
	appendExport(FloorGlobal, KindGlobal, info.FuelGlobal+1)
	for _, g := range info.Globals {
		if !g.Imported && strings.HasPrefix(g.Export, GlobalExportPrefix) {
			appendExport(g.Export, KindGlobal, g.Index)
		}
	}
	return p
}

// encodeCode writes the code section: the metered bodies, then the yield
// function's. It records the br_table counts in info.
func (m *module) encodeCode(p []byte, info *Info) ([]byte, error) {
	fuel, floor := info.FuelGlobal, info.FuelGlobal+1
	p = appendULEB(p, uint64(len(m.code)+1))
	mt := &meter{m: m, fuel: fuel, floor: floor, yield: m.numFuncs(), mode: m.mode}
	var body []byte
	for i, b := range m.code {
		fn := m.importedFuncs + uint32(i)
		var err error
		if body, err = mt.body(body[:0], b, fn); err != nil {
			if le := (*LimitError)(nil); errors.As(err, &le) && le.Where == "" {
				le.Where = fmt.Sprintf("function %d", fn)
				return nil, fmt.Errorf("decoding code section: %w", err)
			}
			return nil, fmt.Errorf("decoding code section: function %d: %w", fn, err)
		}
		info.FunctionBrTableTargets = max(info.FunctionBrTableTargets, mt.fnTargets)
		info.FunctionDominatorDepths = max(info.FunctionDominatorDepths, mt.fnDepths)
		info.LabelBranches = max(info.LabelBranches, mt.fnLabelBranches)
		p = appendULEB(p, uint64(len(body)))
		p = append(p, body...)
	}
	info.BrTableTargets = mt.moduleTargets
	info.DominatorDepths = mt.moduleDepths
	info.StateOps = mt.stateOps.names()
	body = appendYieldBody(body[:0], fuel, floor)
	p = appendULEB(p, uint64(len(body)))
	return append(p, body...), nil
}

// appendVector appends the vector section raw with one more entry, extra:
// its count plus one, its entries, then extra.
func appendVector(p []byte, raw []byte, extra ...byte) ([]byte, error) {
	r := newReader(raw, 0, len(raw))
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	p = appendULEB(p, uint64(n)+1)
	p = append(p, raw[r.pos:]...)
	return append(p, extra...), nil
}
