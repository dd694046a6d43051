;; simd: an Extism plugin written by hand against the kernel ABI with the
;; WebAssembly SIMD proposal's v128 instructions. Its export upper reads
;; raw text and outputs it with the ASCII letters a-z in upper case (other
;; bytes, UTF-8 sequences included, unchanged), 16 bytes a step: a byte
;; mask of a-z (i8x16.gt_u, i8x16.lt_u, v128.and) selects 0x20 to
;; subtract (i8x16.sub).
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory 1)

  (func (export "upper") (result i32)
    (local $n i32) (local $i i32) (local $p i32) (local $v v128) (local $mask v128) (local $off i64)
    (local.set $n (i32.wrap_i64 (call $input_length)))
    ;; The text goes at 1024, zero-padded to a multiple of 16 bytes.
    (if (i32.gt_u (i32.add (local.get $n) (i32.const 1040))
                  (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.lt_s
              (memory.grow (i32.add (i32.shr_u (i32.add (local.get $n) (i32.const 1040)) (i32.const 16)) (i32.const 1)))
              (i32.const 0))
          (then unreachable))))
    (block $read
      (loop $byte
        (br_if $read (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (i32.const 1024) (local.get $i))
          (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte)))
    (local.set $p (i32.const 1024))
    (block $simd
      (loop $chunk
        (br_if $simd (i32.ge_u (local.get $p) (i32.add (i32.const 1024) (local.get $n))))
        (local.set $v (v128.load (local.get $p)))
        (local.set $mask
          (v128.and
            (i8x16.gt_u (local.get $v) (i8x16.splat (i32.const 0x60)))
            (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x7b)))))
        (v128.store (local.get $p)
          (i8x16.sub (local.get $v) (v128.and (local.get $mask) (i8x16.splat (i32.const 0x20)))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $chunk)))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (local.set $i (i32.const 0))
    (block $written
      (loop $out
        (br_if $written (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $out)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $n)))
    (i32.const 0)))
