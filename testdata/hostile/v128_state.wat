;; A mutable v128 global whose high half a call changes. wazero's global
;; API reads and writes 64 bits, so a pooled instance's reset could not
;; give the high half back: the module must not be pooled. compute outputs
;; the global's high 64 bits (little-endian); dirty zeroes the global.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $g (mut v128) (v128.const i64x2 1 0x0102030405060708))

  (func (export "compute") (result i32)
    (local $blk i64)
    (local.set $blk (call $alloc (i64.const 8)))
    (call $store_u64 (local.get $blk) (i64x2.extract_lane 1 (global.get $g)))
    (call $output_set (local.get $blk) (i64.const 8))
    (i32.const 0))

  (func (export "dirty") (result i32)
    (global.set $g (v128.const i64x2 0 0))
    (i32.const 0)))
