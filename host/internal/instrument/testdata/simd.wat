;; simd.wat: a SIMD instruction, which the rewriter refuses. Regenerate with
;;   wat2wasm --debug-names testdata/simd.wat -o testdata/simd.wasm
(module
  (func (export "splat") (result i32)
    (i32x4.extract_lane 0 (i32x4.splat (i32.const 3)))))
