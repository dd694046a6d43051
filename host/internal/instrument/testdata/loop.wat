;; loop.wat: loops, recursion, globals, imports and indirect calls for the
;; instrument tests.
(module
  (import "env" "add" (func $add (param i64 i64) (result i64)))
  (import "env" "base" (global $base i64))
  (global $g (mut i32) (i32.const 7))
  (global $c i64 (i64.const 42))
  (global $f (mut f64) (f64.const 1.5))
  (memory (export "memory") 1 10)
  (table 4 funcref)
  (elem (i32.const 0) $sum $fib $get_g)
  (type $i32_to_i64 (func (param i32) (result i64)))

  ;; sum returns 0+1+...+(n-1), through the imported add.
  (func $sum (export "sum") (param $n i32) (result i64)
    (local $i i32) (local $acc i64)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (call $add (local.get $acc) (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $acc))

  ;; spin never returns.
  (func (export "spin")
    (loop $l (br $l)))

  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else
        (i32.add
          (call $fib (i32.sub (local.get $n) (i32.const 1)))
          (call $fib (i32.sub (local.get $n) (i32.const 2)))))))

  (func $get_g (export "get_g") (result i32) (global.get $g))

  (func (export "bump") (result i32)
    (global.set $g (i32.add (global.get $g) (i32.const 1)))
    (global.get $g))

  (func (export "consts") (result i64)
    (i64.add (global.get $base) (global.get $c)))

  ;; indirect calls table slot 0 ($sum) with n.
  (func (export "indirect") (param $n i32) (result i64)
    (call_indirect (type $i32_to_i64) (local.get $n) (i32.const 0)))

  ;; nested runs an inner loop of m iterations inside an outer loop of n.
  (func (export "nested") (param $n i32) (param $m i32) (result i32)
    (local $i i32) (local $j i32) (local $k i32)
    (block $out
      (loop $outer
        (br_if $out (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $in
          (loop $inner
            (br_if $in (i32.ge_u (local.get $j) (local.get $m)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $inner)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer)))
    (local.get $k)))
