;; Increments a global on every call and outputs its value as one ASCII
;; digit: a reused instance would answer 2, 3, ...
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $calls (mut i32) (i32.const 0))
  (func $emit (param $ptr i32) (param $len i32)
    (local $blk i64) (local $i i32)
    (local.set $blk (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (call $output_set (local.get $blk) (i64.extend_i32_u (local.get $len))))
  (func (export "compute") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store8 (i32.const 0) (i32.add (i32.const 48) (global.get $calls)))
    (call $emit (i32.const 0) (i32.const 1))
    (i32.const 0)))
