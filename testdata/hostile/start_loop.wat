;; The start function loops forever in pure WebAssembly. It runs while the
;; instance is created, before the host holds the instance: the call's
;; hard deadline must end it (execution_timeout).
(module
  (memory (export "memory") 1)
  (func $start
    (loop $forever (br $forever)))
  (start $start)
  (func (export "describe") (result i32) (i32.const 0))
  (func (export "compute") (result i32) (i32.const 0)))
