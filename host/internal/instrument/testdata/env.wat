;; env.wat: the "env" module the loop.wat tests import from; not rewritten.
;;
(module
  (func (export "add") (param i64 i64) (result i64)
    (i64.add (local.get 0) (local.get 1)))
  (global (export "base") i64 (i64.const 1000)))
