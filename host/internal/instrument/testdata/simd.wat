;; simd.wat: a SIMD instruction, which the rewriter refuses.
(module
  (func (export "splat") (result i32)
    (i32x4.extract_lane 0 (i32x4.splat (i32.const 3)))))
