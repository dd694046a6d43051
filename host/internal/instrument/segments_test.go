package instrument

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// fuelCase is one metered call and the fuel it must use, derived by hand in
// the comment above it. Every instruction weighs 1 except block, loop, else
// and end (0), calls (5), memory.grow (1000), table.grow (100) and the bulk
// operations (10 plus their length part); see the package documentation.
type fuelCase struct {
	file, fn string
	args     []uint64
	want     int64    // fuel used
	result   []uint64 // nil: not checked
}

var fuelCases = []fuelCase{
	// pick: the entry segment is local.get, if: 2. The then-arm is
	// i32.const: 1; the else-arm i32.const, i32.const, i32.add: 3. After
	// the if both arms fall through to the function's end, which weighs 0
	// and has no metering point.
	{"segments.wasm", "pick", []uint64{1}, 2 + 1, []uint64{10}},
	{"segments.wasm", "pick", []uint64{0}, 2 + 3, []uint64{21}},

	// clamp: entry local.get, i32.eqz, br_if: 3. When the br_if is taken,
	// the code after $b is local.get: 1. Otherwise the segment after the
	// br_if is local.get, i32.const, i32.gt_u, if: 4, all of weight 1, so it
	// is charged at the start of the then-arm (i32.const, local.set: 2) and
	// of an added else-arm instead. Both arms reach the local.get after $b.
	{"segments.wasm", "clamp", []uint64{0}, 3 + 1, []uint64{0}},
	{"segments.wasm", "clamp", []uint64{5}, 3 + 4 + 1, []uint64{5}},
	{"segments.wasm", "clamp", []uint64{500}, 3 + 4 + 2 + 1, []uint64{100}},

	// join: entry local.get, if: 2. The then-arm is i32.const, local.set,
	// br $b: 3; the else-arm i32.const, local.set: 2, and it goes on past
	// the if's end (nothing else reaches it) through local.get, i32.const,
	// i32.mul, local.set: 4. The code after $b, local.get, i32.const,
	// i32.add (3), is reached only by the br and by falling through, both
	// always: each pays for it and it has no metering point.
	{"segments.wasm", "join", []uint64{1}, 2 + 3 + 3, []uint64{8}},
	{"segments.wasm", "join", []uint64{0}, 2 + 2 + 4 + 3, []uint64{19}},

	// dead: br $b (1), then dead code up to $b's end, not charged; only the
	// br reaches the code after $b, so the entry segment goes on with
	// i32.const: 1.
	{"segments.wasm", "dead", nil, 1 + 1, []uint64{5}},

	// table: entry local.get, br_table: 2. Each target is a segment of its
	// own: i32.const, return (2) after $a and after $b, i32.const (1) after
	// $c, which is also the default.
	{"segments.wasm", "table", []uint64{0}, 2 + 2, []uint64{10}},
	{"segments.wasm", "table", []uint64{1}, 2 + 2, []uint64{20}},
	{"segments.wasm", "table", []uint64{2}, 2 + 1, []uint64{30}},
	{"segments.wasm", "table", []uint64{7}, 2 + 1, []uint64{30}},

	// count: the entry segment is empty. A br_if goes back to the loop, so
	// its header charges the body every iteration: local.get, i32.const,
	// i32.add, local.set, local.get, local.get, i32.lt_u, br_if: 8. After
	// the loop, local.get: 1. The body runs max(n, 1) times.
	{"segments.wasm", "count", []uint64{0}, 8 + 1, []uint64{1}},
	{"segments.wasm", "count", []uint64{1}, 8 + 1, []uint64{1}},
	{"segments.wasm", "count", []uint64{10}, 10*8 + 1, []uint64{10}},

	// grow: entry local.get, br_if: 2. The segment after the br_if holds
	// memory.grow: i32.const, memory.grow, i32.const, i32.eq, if = 1004,
	// charged (and tested) before it runs rather than in the if's arms.
	// memory.grow 0 returns 1, so the then-arm (unreachable) does not run.
	// After $b, i32.const: 1.
	{"segments.wasm", "grow", []uint64{1}, 2 + 1, []uint64{1}},
	{"segments.wasm", "grow", []uint64{0}, 2 + 1004 + 1, []uint64{1}},

	// chain: entry local.get, i32.eqz, br_if: 3. The segment after the br_if
	// (local.get, i32.const, i32.gt_u, if: 4) is charged in the outer if's
	// arms: the then-arm, whose first segment (the inner condition, 4 more)
	// passes 8 on to the inner arms (i32.const, local.set: 2 each), and an
	// added else-arm (4). After $b, local.get: 1.
	{"segments.wasm", "chain", []uint64{0}, 3 + 1, []uint64{0}},
	{"segments.wasm", "chain", []uint64{5}, 3 + 4 + 1, []uint64{5}},
	{"segments.wasm", "chain", []uint64{15}, 3 + 4 + 4 + 2 + 1, []uint64{15}},
	{"segments.wasm", "chain", []uint64{25}, 3 + 4 + 4 + 2 + 1, []uint64{20}},

	// sum: the loop's header, local.get, local.get, i32.ge_u, br_if (4), is
	// entered only by falling into the loop and by br $top, so those pay for
	// it: the entry segment (empty, so 0+4) and the segment after the br_if,
	// local.get, local.get, i64.extend_i32_u, call (5), local.set, local.get,
	// i32.const, i32.add, local.set, br (14+4). When the br_if leaves, the
	// code after $done is local.get: 1. So sum(n) = 4 + 18n + 1.
	{"loop.wasm", "sum", []uint64{0}, 5, []uint64{0}},
	{"loop.wasm", "sum", []uint64{3}, 5 + 3*18, []uint64{3}},
	{"loop.wasm", "sum", []uint64{100}, 5 + 100*18, []uint64{4950}},

	// nested: the outer header (local.get, local.get, i32.ge_u, br_if: 4)
	// is paid for by the entry segment and by the segment after $in. After
	// the outer br_if, i32.const, local.set (2) falls into the inner loop and
	// pays for its header (4 again): 6. After the inner br_if, local.get,
	// i32.const, i32.add, local.set twice and br (9) plus the inner header:
	// 13. After $in, local.get, i32.const, i32.add, local.set, br (5) plus
	// the outer header: 9. After $out, local.get: 1. So nested(n, m) =
	// 4 + n(6 + 13m + 9) + 1.
	{"loop.wasm", "nested", []uint64{0, 5}, 5, []uint64{0}},
	{"loop.wasm", "nested", []uint64{3, 4}, 5 + 3*15 + 3*4*13, []uint64{12}},
	{"loop.wasm", "nested", []uint64{7, 0}, 5 + 7*15, []uint64{0}},

	// indirect: local.get, i32.const, call_indirect: 7, then sum(n).
	{"loop.wasm", "indirect", []uint64{3}, 7 + 5 + 3*18, []uint64{3}},
	// bump: global.get, i32.const, i32.add, global.set, global.get.
	{"loop.wasm", "bump", nil, 5, []uint64{8}},
	// consts: global.get, global.get, i64.add.
	{"loop.wasm", "consts", nil, 3, []uint64{1042}},

	// swap: local.get, local.get (2), then a block and a loop that nothing
	// branches to: its header segment, local.set, local.set, local.get,
	// local.get (4), is paid for by the entry segment.
	{"features.wasm", "swap", []uint64{1, 2}, 2 + 4, []uint64{2, 1}},
	// sat: local.get, i32.trunc_sat_f64_s, local.get, i64.trunc_sat_f64_u,
	// i64.extend32_s.
	{"features.wasm", "sat", []uint64{0}, 5, nil},
	// bulk: 3 i32.const and memory.init (10 + 12>>6 = 0), 2 i32.const,
	// local.get and memory.fill (10 + 640>>6 = 10), 3 i32.const and
	// memory.copy (10 + 5>>6 = 0), i32.const and i32.load8_u. It returns
	// the 'o' of "hello" copied to 20.
	{"features.wasm", "bulk", []uint64{640}, 13 + 13 + 10 + 13 + 2, []uint64{'o'}},
	// refs: i32.const, ref.func, table.set (3); 3 i32.const, table.init
	// (13); ref.null, i32.const, table.grow, drop (103); i32.const,
	// ref.null, i32.const, table.fill (13); 3 i32.const, table.copy (13);
	// elem.drop (1); table.size, i32.const, table.get, ref.is_null, i32.add
	// (5); 3 i32.const, table.get, ref.is_null, select, i32.add (7). The
	// lengths (1, 2, 1 elements) are under 8: no length part.
	{"features.wasm", "refs", nil, 3 + 13 + 103 + 13 + 13 + 1 + 5 + 7, []uint64{15}},
	// grow: i32.const, memory.grow.
	{"features.wasm", "grow", nil, 1 + costMemoryGrow, []uint64{1}},
}

// TestFuelSegments checks the fuel of small functions in every metering
// mode against the counts derived in fuelCases.
func TestFuelSegments(t *testing.T) {
	for _, md := range modes {
		outs := map[string][]byte{}
		for _, c := range fuelCases {
			out := outs[c.file]
			if out == nil {
				var err error
				if out, _, err = rewrite(readTestdata(t, c.file), Options{}, md.mode); err != nil {
					t.Fatal(err)
				}
				outs[c.file] = out
			}
			in := instantiate(t, out)
			res, used, err := in.metered(plenty, c.fn, c.args...)
			if err != nil {
				t.Errorf("%s mode: %s%v: %v", md.name, c.fn, c.args, err)
				continue
			}
			if used != c.want {
				t.Errorf("%s mode: %s%v used %d fuel, want %d", md.name, c.fn, c.args, used, c.want)
			}
			if c.result != nil && !reflect.DeepEqual(res, c.result) {
				t.Errorf("%s mode: %s%v = %v, want %v", md.name, c.fn, c.args, res, c.result)
			}
		}
	}
}

// TestFuelExhaustionExact checks where a run out of fuel stops: at the
// first test of the count after it drops below zero, with the same count
// in every mode.
func TestFuelExhaustionExact(t *testing.T) {
	cases := []struct {
		file, fn string
		args     []uint64
		budget   int64
		fuel     int64 // the global after the trap
	}{
		// grow(0): the entry charges 2, leaving 1003; the next segment
		// charges 1004 and tests before memory.grow runs.
		{"segments.wasm", "grow", []uint64{0}, 1005, -1},
		// spin: its header charges nop, br (2) every iteration and tests.
		{"segments.wasm", "spin", nil, 10, -2},
		{"segments.wasm", "spin", nil, 11, -1},
		// loop.wasm's spin: br (1) per iteration.
		{"loop.wasm", "spin", nil, 100000, -1},
		// sum: 4 at entry, then 18 per iteration, tested before the call.
		{"loop.wasm", "sum", []uint64{1 << 30}, 4 + 10*18 - 1, -1},
		// fib(2): 21 at entry, leaving 4; the call to fib(1) charges 5.
		{"loop.wasm", "fib", []uint64{2}, 25, -1},
		// A zero budget: get_g's entry charges 1.
		{"loop.wasm", "get_g", nil, 0, -1},
	}
	for _, md := range modes {
		for _, c := range cases {
			out, _, err := rewrite(readTestdata(t, c.file), Options{}, md.mode)
			if err != nil {
				t.Fatal(err)
			}
			in := instantiate(t, out)
			_, _, err = in.metered(c.budget, c.fn, c.args...)
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Errorf("%s mode: %s%v with %d fuel: %v, want an unreachable trap", md.name, c.fn, c.args, c.budget, err)
			}
			if f := in.fuel(); f != c.fuel {
				t.Errorf("%s mode: %s%v with %d fuel: %d left, want %d", md.name, c.fn, c.args, c.budget, f, c.fuel)
			}
		}
	}
}

// TestMeteringPoints counts the charges and tests of the count in each
// function of segments.wasm, in global mode, where each starts with
// global.get $fuel; i64.const: empty segments and segments paid for by
// others have none.
func TestMeteringPoints(t *testing.T) {
	orig := readTestdata(t, "segments.wasm")
	out, info, err := rewrite(orig, Options{}, modeGlobal)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	floor := info.FuelGlobal + 1
	if floor > 0x7f {
		t.Fatalf("floor global %d: not one byte", floor)
	}
	// A metering point is a charge or, where a point charges nothing, a
	// test alone.
	charge := []byte{opGlobalGet, byte(info.FuelGlobal), opI64Const}
	test := []byte{opGlobalGet, byte(info.FuelGlobal), opGlobalGet, byte(floor)}
	want := map[string]int{
		"pick":  3, // entry, then, else
		"clamp": 4, // entry, then, added else, after $b
		"join":  3, // entry, then, else
		"dead":  1, // entry
		"table": 4, // entry, the three targets
		"count": 3, // entry (a test only), header, after the loop
		"grow":  4, // entry, after the br_if, then, after $b
		"chain": 5, // entry, inner then, inner else, added outer else, after $b
		"spin":  2, // entry (a test only), header
	}
	got := map[string]int{}
	for _, e := range info.Exports {
		if e.Kind != KindFunction {
			continue
		}
		b := m.code[e.Index-m.importedFuncs]
		code := m.wasm[b.start:b.end]
		got[e.Name] = bytes.Count(code, charge) + bytes.Count(code, test)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metering points %v, want %v", got, want)
	}
}

// TestGoModuleFuel checks the fuel of the Go test module's loops per
// iteration: about the instructions one iteration runs, not the size of
// the function (Go wraps each function's body in one loop, which the
// function's jumps go back to). With go1.26 an iteration of loop is the
// dispatch (local.get, br_table: 2), the body (14), the loop's test (7, with
// its if) and the jump back (i32.const, local.set, br: 3), 26; add's body
// is 8, so 20. The bound leaves room for other compilers.
func TestGoModuleFuel(t *testing.T) {
	out, _ := mustRewrite(t, goLoopModule(t), Options{})
	in, _ := goInstance(t, out, true)
	for _, fn := range []string{"loop", "add"} {
		var used []int64
		ns := []int64{1, 10, 1000}
		for _, n := range ns {
			_, u, err := in.metered(plenty, fn, uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			used = append(used, u)
		}
		a, b := linear(t, ns, used)
		t.Logf("%s(n) uses %d + %d·n fuel", fn, a, b)
		if b > 40 {
			t.Errorf("%s: %d fuel per iteration, want at most 40", fn, b)
		}
	}
}
