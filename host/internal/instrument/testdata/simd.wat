;; simd.wat: the SIMD instructions (WebAssembly 2.0) in every immediate
;; shape, and v128 as the type of locals, parameters, results, block types,
;; a typed select and globals, for the instrument tests. The exports take
;; and return scalars: a checksum of the vectors they made.
(module
  (type $vv (func (param v128) (result v128)))
  (memory (export "memory") 1)
  (data (i32.const 0)
    "\00\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f"
    "\10\11\12\13\14\15\16\17\18\19\1a\1b\1c\1d\1e\1f")
  (global $acc (mut v128) (v128.const i32x4 1 2 3 4))
  (global $k v128 (v128.const i64x2 0x0102030405060708 -1))

  ;; mix folds v into the checksum s.
  (func $mix (param $s i64) (param $v v128) (result i64)
    (i64.add
      (i64.mul (local.get $s) (i64.const 31))
      (i64.xor (i64x2.extract_lane 0 (local.get $v)) (i64x2.extract_lane 1 (local.get $v)))))

  ;; shapes runs instructions of every immediate shape and of the usual
  ;; kinds and returns the checksum of their results.
  (func (export "shapes") (result i64)
    (local $v v128) (local $w v128) (local $s i64)
    ;; A memory argument: loads, extending and splatting loads, store,
    ;; zero-extending loads.
    (local.set $v (v128.load offset=16 align=8 (i32.const 0)))
    (local.set $s (call $mix (local.get $s) (local.get $v)))
    (local.set $s (call $mix (local.get $s) (v128.load8x8_s (i32.const 1))))
    (local.set $s (call $mix (local.get $s) (v128.load8x8_u offset=2 (i32.const 1))))
    (local.set $s (call $mix (local.get $s) (v128.load16x4_s (i32.const 3))))
    (local.set $s (call $mix (local.get $s) (v128.load16x4_u align=2 (i32.const 4))))
    (local.set $s (call $mix (local.get $s) (v128.load32x2_s (i32.const 5))))
    (local.set $s (call $mix (local.get $s) (v128.load32x2_u offset=1 align=1 (i32.const 6))))
    (local.set $s (call $mix (local.get $s) (v128.load8_splat (i32.const 7))))
    (local.set $s (call $mix (local.get $s) (v128.load16_splat (i32.const 8))))
    (local.set $s (call $mix (local.get $s) (v128.load32_splat (i32.const 9))))
    (local.set $s (call $mix (local.get $s) (v128.load64_splat (i32.const 10))))
    (v128.store offset=32 align=4 (i32.const 0) (local.get $v))
    (local.set $s (call $mix (local.get $s) (v128.load32_zero offset=33 (i32.const 0))))
    (local.set $s (call $mix (local.get $s) (v128.load64_zero (i32.const 11))))
    ;; A memory argument and a lane.
    (local.set $w (v128.const i8x16 -1 -2 -3 -4 -5 -6 -7 -8 -9 -10 -11 -12 -13 -14 -15 -16))
    (local.set $w (v128.load8_lane 15 (i32.const 3) (local.get $w)))
    (local.set $w (v128.load16_lane offset=4 7 (i32.const 1) (local.get $w)))
    (local.set $w (v128.load32_lane align=2 3 (i32.const 2) (local.get $w)))
    (local.set $w (v128.load64_lane 1 (i32.const 8) (local.get $w)))
    (local.set $s (call $mix (local.get $s) (local.get $w)))
    (v128.store8_lane 14 (i32.const 100) (local.get $w))
    (v128.store16_lane offset=2 6 (i32.const 100) (local.get $w))
    (v128.store32_lane 2 (i32.const 104) (local.get $w))
    (v128.store64_lane align=4 0 (i32.const 108) (local.get $w))
    (local.set $s (call $mix (local.get $s) (v128.load (i32.const 100))))
    ;; 16 bytes: v128.const; 16 lanes: i8x16.shuffle.
    (local.set $w (v128.const f32x4 1.5 -2.25 3.0 0.125))
    (local.set $s (call $mix (local.get $s) (local.get $w)))
    (local.set $s (call $mix (local.get $s)
      (i8x16.shuffle 31 0 30 1 29 2 28 3 27 4 26 5 25 6 24 7 (local.get $v) (local.get $w))))
    ;; A lane: extract and replace in every shape.
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_s (i8x16.extract_lane_s 12 (local.get $v)))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i8x16.extract_lane_u 5 (local.get $w)))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_s (i16x8.extract_lane_s 7 (local.get $w)))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i16x8.extract_lane_u 3 (local.get $w)))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i32x4.extract_lane 2 (local.get $v)))))
    (local.set $s (i64.add (local.get $s) (i64x2.extract_lane 1 (local.get $v))))
    (local.set $s (i64.add (local.get $s) (i64.trunc_f32_s (f32x4.extract_lane 1 (local.get $w)))))
    (local.set $s (i64.add (local.get $s) (i64.trunc_f64_s (f64x2.extract_lane 0
      (f64x2.promote_low_f32x4 (local.get $w))))))
    (local.set $v (i8x16.replace_lane 15 (local.get $v) (i32.const 200)))
    (local.set $v (i16x8.replace_lane 6 (local.get $v) (i32.const 40000)))
    (local.set $v (i32x4.replace_lane 1 (local.get $v) (i32.const -7)))
    (local.set $v (i64x2.replace_lane 0 (local.get $v) (i64.const 0x1122334455667788)))
    (local.set $w (f32x4.replace_lane 3 (local.get $w) (f32.const 9.5)))
    (local.set $w (f64x2.replace_lane 1 (local.get $w) (f64.const -0.5)))
    (local.set $s (call $mix (local.get $s) (local.get $v)))
    (local.set $s (call $mix (local.get $s) (local.get $w)))
    ;; No immediate: splats, arithmetic, comparisons, bitwise, conversions.
    (local.set $s (call $mix (local.get $s) (i8x16.swizzle (local.get $v) (v128.const i8x16 3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 32))))
    (local.set $s (call $mix (local.get $s) (i16x8.splat (i32.const 1234))))
    (local.set $s (call $mix (local.get $s) (i64x2.splat (i64.const -99))))
    (local.set $s (call $mix (local.get $s) (f64x2.splat (f64.const 2.5))))
    (local.set $s (call $mix (local.get $s) (i32x4.add (local.get $v) (i32x4.splat (i32.const 3)))))
    (local.set $s (call $mix (local.get $s) (i8x16.popcnt (local.get $v))))
    (local.set $s (call $mix (local.get $s) (i32x4.dot_i16x8_s (local.get $v) (local.get $v))))
    (local.set $s (call $mix (local.get $s) (i16x8.q15mulr_sat_s (local.get $v) (local.get $w))))
    (local.set $s (call $mix (local.get $s) (i64x2.extmul_high_i32x4_u (local.get $v) (local.get $v))))
    (local.set $s (call $mix (local.get $s) (i32x4.extadd_pairwise_i16x8_s (local.get $v))))
    (local.set $s (call $mix (local.get $s) (i8x16.narrow_i16x8_s (local.get $v) (local.get $v))))
    (local.set $s (call $mix (local.get $s) (i64x2.shl (local.get $v) (i32.const 3))))
    (local.set $s (call $mix (local.get $s) (i8x16.avgr_u (local.get $v) (i8x16.abs (local.get $v)))))
    (local.set $s (call $mix (local.get $s) (i8x16.eq (local.get $v) (local.get $v))))
    (local.set $s (call $mix (local.get $s) (i32x4.lt_s (local.get $v) (local.get $w))))
    (local.set $s (call $mix (local.get $s) (i64x2.ge_s (local.get $v) (local.get $w))))
    (local.set $s (call $mix (local.get $s) (f32x4.gt (local.get $w) (f32x4.splat (f32.const 0)))))
    (local.set $s (call $mix (local.get $s)
      (v128.bitselect (v128.not (local.get $v)) (v128.andnot (local.get $w) (local.get $v))
        (v128.or (v128.and (local.get $v) (local.get $w)) (v128.xor (local.get $v) (global.get $k))))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (v128.any_true (local.get $v)))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i32x4.all_true (local.get $v)))))
    (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i8x16.bitmask (local.get $w)))))
    (local.set $s (call $mix (local.get $s) (f32x4.demote_f64x2_zero (f64x2.promote_low_f32x4 (local.get $w)))))
    (local.set $s (call $mix (local.get $s) (f64x2.nearest (f64x2.sqrt (f64x2.abs (f64x2.convert_low_i32x4_s (local.get $v)))))))
    (local.set $s (call $mix (local.get $s) (i32x4.trunc_sat_f32x4_s (f32x4.mul (local.get $w) (f32x4.convert_i32x4_u (local.get $v))))))
    (local.set $s (call $mix (local.get $s) (i32x4.trunc_sat_f64x2_u_zero (f64x2.pmin (local.get $w) (local.get $w)))))
    ;; v128 through a global, a typed select and block types.
    (global.set $acc (i32x4.mul (global.get $acc) (global.get $acc)))
    (local.set $s (call $mix (local.get $s) (global.get $acc)))
    (local.set $s (call $mix (local.get $s)
      (select (result v128) (local.get $v) (local.get $w) (i32.wrap_i64 (local.get $s)))))
    (local.set $s (call $mix (local.get $s)
      (block (result v128) (local.get $w))))
    (local.get $s)
    (local.get $v)
    (block (type $vv) (param v128) (result v128)
      (i16x8.sub (i16x8.splat (i32.const 1))))
    (local.set $s (call $mix))
    (local.set $s (call $mix (local.get $s)
      (if (result v128) (i64.gt_s (local.get $s) (i64.const 0))
        (then (local.get $v))
        (else (local.get $w)))))
    (local.get $s))

  ;; loop runs n iterations of SIMD arithmetic, a shuffle and memory
  ;; accesses, and returns the checksum of the vector they leave. An
  ;; iteration weighs 28 (see TestSIMDFuel).
  (func (export "loop") (param $n i32) (result i64)
    (local $v v128)
    (local.set $v (v128.const i32x4 1 2 3 4))
    (block $done
      (loop $top
        (br_if $done (i32.eqz (local.get $n)))                                    ;; 3
        (local.set $v (i32x4.add (local.get $v) (i8x16.popcnt (local.get $v))))   ;; 5
        (local.set $v (i32x4.dot_i16x8_s (local.get $v)
          (v128.const i16x8 1 -1 2 -2 3 -3 4 -4)))                                 ;; 4
        (local.set $v (i8x16.shuffle 4 5 6 7 0 1 2 3 28 29 30 31 8 9 10 11
          (local.get $v) (local.get $v)))                                          ;; 4
        (v128.store offset=64 (i32.const 0) (local.get $v))                        ;; 3
        (local.set $v (v128.load8_lane offset=70 3 (i32.const 0) (local.get $v)))  ;; 4
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))                     ;; 4
        (br $top)))                                                                ;; 1
    (call $mix (i64.const 0) (local.get $v))))
