;; allocfree: an Extism plugin written by hand against the kernel ABI. Its
;; export run allocates a block of 1 MiB, stores a byte at each end of it,
;; reads both back and frees it, 2,000 times: 2,000 MiB in all, which fits
;; a 64 MiB memory cap (its sidecar's extism.memory.max_pages: 1024) only
;; when the host reuses freed blocks. It outputs {"allocated_mib":2000}; a
;; failed alloc, or a byte that reads back wrong, is a plain-text error
;; naming what failed, and returns 1. It takes no input.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (memory 1)
  (data (i32.const 0) "{\"allocated_mib\":2000}")          ;; 22 bytes at 0
  (data (i32.const 64) "alloc returned 0: out of memory")  ;; 31 bytes at 64
  (data (i32.const 128) "a stored byte read back wrong")   ;; 29 bytes at 128

  ;; $emit copies n bytes at ptr of this module's memory into a new block
  ;; and returns the block (0 when the alloc fails).
  (func $emit (param $ptr i32) (param $n i32) (result i64)
    (local $off i64) (local $i i32)
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (if (i64.eqz (local.get $off)) (then (return (i64.const 0))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8
          (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (local.get $off))

  (func $fail (param $ptr i32) (param $n i32) (result i32)
    (call $error_set (call $emit (local.get $ptr) (local.get $n)))
    (i32.const 1))

  (func (export "run") (result i32)
    (local $i i32) (local $off i64) (local $b i32)
    (block $done
      (loop $round
        (br_if $done (i32.ge_u (local.get $i) (i32.const 2000)))
        (local.set $off (call $alloc (i64.const 1048576)))
        (if (i64.eqz (local.get $off))
          (then (return (call $fail (i32.const 64) (i32.const 31)))))
        (local.set $b (i32.and (local.get $i) (i32.const 255)))
        (call $store_u8 (local.get $off) (local.get $b))
        (call $store_u8 (i64.add (local.get $off) (i64.const 1048575)) (local.get $b))
        (if (i32.or
              (i32.ne (call $load_u8 (local.get $off)) (local.get $b))
              (i32.ne (call $load_u8 (i64.add (local.get $off) (i64.const 1048575))) (local.get $b)))
          (then (return (call $fail (i32.const 128) (i32.const 29)))))
        (call $free (local.get $off))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $round)))
    (call $output_set (call $emit (i32.const 0) (i32.const 22)) (i64.const 22))
    (i32.const 0)))
