//go:build !wasip1

package guest

import (
	"encoding/binary"
	"sync"
)

// On a non-wasip1 build (go test and go vet on the host) the host functions
// are an in-memory fake of the Extism kernel and toolhost:host/env, so that
// the SDK's logic runs unchanged. Checkpoint says go on and an engine
// window grants fakeEngineWindowMS unless a test of this package sets
// otherwise. The fake is safe for concurrent use but shared by the process.

// fakeEngineWindowMS is the window the fake grants: the model's default
// engine budget.
const fakeEngineWindowMS = 4000

// fakeMaxLogs bounds the log lines the fake keeps (the most recent).
const fakeMaxLogs = 256

var fake = newFakeHost()

type fakeHost struct {
	mu      sync.Mutex
	input   []byte
	mem     []byte            // block memory; offset 0 is never handed out
	blocks  map[uint64]uint64 // live block offset → length
	output  []byte
	errDoc  []byte
	logs    []string
	stop    uint32 // what checkpoint returns
	window  int64  // what claim_engine_window returns
	claims  []int64
	noAlloc bool // alloc returns 0, as when the memory budget is spent
}

func newFakeHost() *fakeHost {
	return &fakeHost{mem: make([]byte, 8), blocks: map[uint64]uint64{}, window: fakeEngineWindowMS}
}

// block returns the n bytes at off, which must lie in one live block; a
// bad access panics as the real host traps.
func (f *fakeHost) block(off, n uint64) []byte {
	for start, length := range f.blocks {
		if off >= start && off-start <= length && length-(off-start) >= n {
			return f.mem[off : off+n]
		}
	}
	panic("guest: fake host: memory block access out of bounds")
}

func extismInputLength() uint64 {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	return uint64(len(fake.input))
}

func extismInputLoadU8(offset uint64) uint32 {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	return uint32(fake.input[offset])
}

func extismInputLoadU64(offset uint64) uint64 {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	return binary.LittleEndian.Uint64(fake.input[offset : offset+8])
}

func extismAlloc(n uint64) uint64 {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.noAlloc {
		return 0
	}
	off := uint64(len(fake.mem))
	fake.mem = append(fake.mem, make([]byte, n+8)...) // a gap between blocks
	fake.blocks[off] = n
	return off
}

func extismFree(offset uint64) {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	delete(fake.blocks, offset)
	if len(fake.blocks) == 0 {
		fake.mem = fake.mem[:8] // nothing live: reuse the memory
	}
}

func extismStoreU8(offset uint64, v uint32) {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	fake.block(offset, 1)[0] = byte(v)
}

func extismStoreU64(offset uint64, v uint64) {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	binary.LittleEndian.PutUint64(fake.block(offset, 8), v)
}

func extismOutputSet(offset, n uint64) {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	fake.output = append([]byte(nil), fake.block(offset, n)...)
}

func extismErrorSet(offset uint64) {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	fake.errDoc = append([]byte(nil), fake.block(offset, fake.blocks[offset])...)
}

func extismLogInfo(offset uint64) {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	fake.logs = append(fake.logs, string(fake.block(offset, fake.blocks[offset])))
	if len(fake.logs) > fakeMaxLogs {
		fake.logs = fake.logs[len(fake.logs)-fakeMaxLogs:]
	}
}

func hostCheckpoint() uint32 {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	return fake.stop
}

func hostClaimEngineWindow(reserveMS int64) int64 {
	fake.mu.Lock()
	defer fake.mu.Unlock()
	fake.claims = append(fake.claims, reserveMS)
	if fake.stop != 0 {
		return -1
	}
	return fake.window
}
