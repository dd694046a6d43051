;; Tries to leave state behind for the next call of the same module. The
;; compute export observes everything a call can see of what came before —
;; a checksum of all linear memory, a mutable global, the memory's size,
;; the Extism variables, the first block's offset, the WASI random source
;; and monotonic clock, and whether stdout is still open — and outputs it
;; as eight little-endian u64 words. Each dirty_* export first changes all
;; of that it can (memory, the global, a variable, a large block, the random
;; source and the clock) and then ends in its own way: it returns, traps,
;; grows memory, returns non-zero, runs out of fuel or closes stdout. The
;; next compute must observe exactly what it observes in a fresh instance.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (memory (export "memory") 1 4)
  (global $g (mut i64) (i64.const 7))
  (data (i32.const 1024) "pristine")

  ;; A position-sensitive checksum of all of linear memory.
  (func $checksum (result i64)
    (local $i i32) (local $end i32) (local $sum i64)
    (local.set $end (i32.mul (memory.size) (i32.const 65536)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
      (local.set $sum (i64.add (i64.rotl (local.get $sum) (i64.const 5)) (i64.load (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 8)))
      (br $next)))
    (local.get $sum))

  (func (export "compute") (result i32)
    (local $blk i64) (local $sum i64)
    (local.set $sum (call $checksum))
    (local.set $blk (call $alloc (i64.const 64)))
    (call $store_u64 (local.get $blk) (local.get $sum))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 8)) (global.get $g))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 16)) (i64.extend_i32_u (memory.size)))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 24)) (call $var_get (i64.const 0)))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 32)) (local.get $blk))
    (drop (call $random_get (i32.const 2048) (i32.const 8)))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 40)) (i64.load (i32.const 2048)))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 2056)))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 48)) (i64.load (i32.const 2056)))
    ;; One iovec {1024, 8} at 2064; the count written goes to 2072.
    (i32.store (i32.const 2064) (i32.const 1024))
    (i32.store (i32.const 2068) (i32.const 8))
    (call $store_u64 (i64.add (local.get $blk) (i64.const 56))
      (i64.extend_i32_u (call $fd_write (i32.const 1) (i32.const 2064) (i32.const 1) (i32.const 2072))))
    (call $output_set (local.get $blk) (i64.const 64))
    (i32.const 0))

  (func $dirty
    (global.set $g (i64.const 99))
    (i64.store (i32.const 1024) (i64.const 0x2121595452494421))
    (i64.store (i32.const 60000) (i64.const -1))
    (call $var_set (i64.const 0) (i64.const 0))
    (drop (call $alloc (i64.const 65536)))
    (drop (call $random_get (i32.const 3000) (i32.const 64)))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 3100))))

  (func (export "dirty") (result i32) (call $dirty) (i32.const 0))
  (func (export "dirty_trap") (result i32) (call $dirty) unreachable)
  (func (export "dirty_grow") (result i32)
    (drop (memory.grow (i32.const 1)))
    (i64.store (i32.const 70000) (i64.const 5))
    (call $dirty) (i32.const 0))
  (func (export "dirty_fail") (result i32) (call $dirty) (i32.const 1))
  (func (export "dirty_fuel") (result i32) (call $dirty) (loop $spin (br $spin)) (i32.const 0))
  (func (export "dirty_close") (result i32)
    (call $dirty) (drop (call $fd_close (i32.const 1))) (i32.const 0)))
