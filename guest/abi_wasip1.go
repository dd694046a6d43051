//go:build wasip1

package guest

// The host functions the SDK imports (docs/guest-abi.md). Offsets are i64
// handles into host-side memory blocks; 0 is "none".

//go:wasmimport extism:host/env input_length
func extismInputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func extismInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env input_load_u64
func extismInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env alloc
func extismAlloc(n uint64) uint64

//go:wasmimport extism:host/env free
func extismFree(offset uint64)

//go:wasmimport extism:host/env store_u8
func extismStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env store_u64
func extismStoreU64(offset uint64, v uint64)

//go:wasmimport extism:host/env output_set
func extismOutputSet(offset, n uint64)

//go:wasmimport extism:host/env error_set
func extismErrorSet(offset uint64)

//go:wasmimport extism:host/env log_info
func extismLogInfo(offset uint64)

//go:wasmimport toolhost:host/env checkpoint
func hostCheckpoint() uint32

//go:wasmimport toolhost:host/env claim_engine_window
func hostClaimEngineWindow(reserveMS int64) int64

// The exports. Each returns 0 on success; on failure it returns 1 after
// setting a tool error with error_set.

//go:wasmexport describe
func describeExport() int32 { return runDescribe() }

//go:wasmexport compute
func computeExport() int32 { return runCompute() }

// The host calls the exports: unused (staticcheck's U1000) does not count
// //go:wasmexport as a use, nor then what the exports call, so they are
// named here.
var _, _ = describeExport, computeExport
