;; Instructions that change tables and segments, which Info.StateOps names
;; (a reset of memory and globals does not undo them), next to ones that
;; only read (table.get, table.size, memory.init) and are not named.
(module
  (table $t 2 10 funcref)
  (memory 1)
  (elem $e func $f)
  (data $d "x")
  (func $f)
  (func (export "change")
    (table.set $t (i32.const 0) (ref.func $f))
    (drop (table.grow $t (ref.null func) (i32.const 1)))
    (table.fill $t (i32.const 0) (ref.null func) (i32.const 1))
    (table.copy $t $t (i32.const 0) (i32.const 1) (i32.const 1))
    (table.init $t $e (i32.const 0) (i32.const 0) (i32.const 1))
    (elem.drop $e)
    (data.drop $d))
  (func (export "read") (result i32)
    (drop (table.get $t (i32.const 0)))
    (memory.init $d (i32.const 0) (i32.const 0) (i32.const 1))
    (table.size $t)))
