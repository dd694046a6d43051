package testkit

// Generated modules: the structure bombs too large to commit as WAT (a
// br_table of a million labels, runs of tens of thousands of branches),
// built as bytes by the tests that need them.

// Funcs returns a module of n () -> () functions, each with the body code
// (its locals vector and final end included).
func Funcs(n int, code []byte) []byte {
	funcs := uleb(uint64(n))
	bodies := uleb(uint64(n))
	for range n {
		funcs = append(funcs, 0)
		bodies = append(append(bodies, uleb(uint64(len(code)))...), code...)
	}
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	wasm = append(wasm, section(1, []byte{1, 0x60, 0, 0})...)
	wasm = append(wasm, section(3, funcs)...)
	return append(wasm, section(10, bodies)...)
}

// BrTableBody is a function body running one br_table of labels labels
// (its default included), all to one block.
func BrTableBody(labels int) []byte {
	code := append([]byte{0, 0x02, 0x40, 0x41, 0, 0x0e}, uleb(uint64(labels-1))...)
	code = append(code, make([]byte, labels)...)
	return append(code, 0x0b, 0x0b)
}

// RunBody is a function body of n units in a row: (i32.const 0; if; end)
// for kind "if", (i32.const 0; br_if 0) inside one block for "br_if",
// (loop; end) for "loop". These are the compile bombs of issue 11:
// wazero's compile time grows with basic blocks times their depth in the
// dominator tree. Another kind panics.
func RunBody(kind string, n int) []byte {
	var unit []byte
	switch kind {
	case "if":
		unit = []byte{0x41, 0, 0x04, 0x40, 0x0b}
	case "br_if":
		unit = []byte{0x41, 0, 0x0d, 0}
	case "loop":
		unit = []byte{0x03, 0x40, 0x0b}
	default:
		panic("testkit: no run body of kind " + kind)
	}
	code := []byte{0}
	if kind == "br_if" {
		code = append(code, 0x02, 0x40)
	}
	for range n {
		code = append(code, unit...)
	}
	if kind == "br_if" {
		code = append(code, 0x0b)
	}
	return append(code, 0x0b)
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func section(id byte, payload []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(payload)))...), payload...)
}
