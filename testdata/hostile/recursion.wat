(module
  (memory (export "memory") 1)
  (func $deeper (param i64) (result i64)
    (i64.add (call $deeper (i64.add (local.get 0) (i64.const 1))) (i64.const 1)))
  (func (export "compute") (result i32)
    (drop (call $deeper (i64.const 0)))
    (i32.const 0)))
