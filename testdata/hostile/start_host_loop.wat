;; The start function loops forever on Extism alloc(4 MiB) + reset. With
;; its _initialize, Load runs it in the image template and must refuse the
;; module at the image deadline; run per call (no image), the call's hard
;; deadline must end it.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "reset" (func $reset))
  (memory (export "memory") 1)
  (func $start
    (loop $forever
      (drop (call $alloc (i64.const 4194304)))
      (call $reset)
      (br $forever)))
  (start $start)
  (func (export "_initialize"))
  (func (export "describe") (result i32) (i32.const 0))
  (func (export "compute") (result i32) (i32.const 0)))
