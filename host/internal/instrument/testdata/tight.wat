;; tight.wat: the tightest loop a toolchain emits, for the worst-case
;; metering overhead benchmark.
(module
  ;; count runs n iterations of an xorshift step and returns the state.
  (func (export "count") (param $n i32) (result i32)
    (local $x i32)
    (local.set $x (i32.const 1))
    (loop $l
      (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 13))))
      (local.set $x (i32.xor (local.get $x) (i32.shr_u (local.get $x) (i32.const 17))))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $x)))
