;; start_memory.wat: a start function that writes memory and a global, for
;; imaging: the image holds what it did and the output has no start.
(module
  (memory (export "memory") 1)
  (global $ready (mut i32) (i32.const 0))
  (func $init
    (i32.store8 (i32.const 0) (i32.const 42))
    (global.set $ready (i32.const 1)))
  (start $init)
  (func (export "ready") (result i32) (global.get $ready)))
