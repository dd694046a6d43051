;; features.wat: multi-value block types, sign extension, saturating
;; truncation, bulk memory and reference types.
(module
  (memory (export "memory") 1)
  (data $d "hello, world")
  (table $t 2 8 funcref)
  (table $ext 1 externref)
  (elem $e func $swap $sat)
  (type $pair (func (param i32 i32) (result i32 i32)))

  ;; swap goes through a block and a loop with type-index block types.
  (func $swap (export "swap") (param i32 i32) (result i32 i32)
    (local.get 0) (local.get 1)
    (block (type $pair)
      (loop (type $pair)
        (local.set 0) (local.set 1)
        (local.get 0) (local.get 1)))
    )

  (func $sat (export "sat") (param f64) (result i32 i64)
    (i32.trunc_sat_f64_s (local.get 0))
    (i64.extend32_s (i64.trunc_sat_f64_u (local.get 0))))

  (func (export "signext") (param i32) (result i32)
    (i32.extend8_s (local.get 0)))

  ;; bulk copies len bytes of the data segment to 0, fills, copies and
  ;; returns the byte at 20.
  (func (export "bulk") (param $len i32) (result i32)
    (memory.init $d (i32.const 0) (i32.const 0) (i32.const 12))
    (memory.fill (i32.const 100) (i32.const 7) (local.get $len))
    (memory.copy (i32.const 16) (i32.const 0) (i32.const 5))
    (i32.load8_u (i32.const 20)))

  (func (export "drop_data") (data.drop $d))

  (func (export "fill") (param $len i32)
    (memory.fill (i32.const 0) (i32.const 1) (local.get $len)))

  (func (export "refs") (result i32)
    (table.set $t (i32.const 1) (ref.func $swap))
    (table.init $t $e (i32.const 0) (i32.const 0) (i32.const 1))
    (drop (table.grow $t (ref.null func) (i32.const 2)))
    (table.fill $t (i32.const 2) (ref.null func) (i32.const 2))
    (table.copy $t $t (i32.const 3) (i32.const 0) (i32.const 1))
    (elem.drop $e)
    (i32.add
      (i32.add (table.size $t) (ref.is_null (table.get $t (i32.const 2))))
      (select (result i32) (i32.const 10) (i32.const 20) (ref.is_null (table.get $ext (i32.const 0))))))

  (func (export "grow") (result i32)
    (memory.grow (i32.const 1))))
