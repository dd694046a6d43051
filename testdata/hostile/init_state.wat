;; Not hostile: a module whose _initialize leaves state for its image —
;; "initialised" at offset 0 and a mutable global set to 42 — and whose
;; compute outputs the first 16 bytes of memory and the global (24 bytes).
;; host's TestImageCache uses it to tell an image from the cache apart
;; from one its template made.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1 2)
  (global $g (mut i64) (i64.const 0))
  (data (i32.const 512) "initialised")

  (func (export "_initialize")
    (i64.store (i32.const 0) (i64.load (i32.const 512)))
    (i64.store (i32.const 8) (i64.load (i32.const 520)))
    (global.set $g (i64.const 42)))

  (func (export "compute") (result i32)
    (local $blk i64)
    (local.set $blk (call $alloc (i64.const 24)))
    (call $store_u64 (local.get $blk) (i64.load (i32.const 0)))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 8)) (i64.load (i32.const 8)))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 16)) (global.get $g))
    (call $output_set (local.get $blk) (i64.const 24))
    (i32.const 0)))
