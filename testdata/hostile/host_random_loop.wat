;; compute loops on WASI random_get filling 4 MiB of its linear memory:
;; WASI functions are charged for their work and stopped at the hard
;; deadline like the Extism ones.
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 64)
  (func (export "compute") (result i32)
    (loop $forever
      (drop (call $random_get (i32.const 0) (i32.const 4194304)))
      (br $forever))
    (i32.const 0)))
