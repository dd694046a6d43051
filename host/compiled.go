package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/tetratelabs/wazero"
)

// wazero keeps one compiled module per module content in a runtime: a
// second CompileModule of the same bytes returns a handle on the same
// engine entry, and closing any handle deletes that entry under the
// others, whose next instantiation then fails inside the engine. The same
// bytes are compiled more than once whenever two files hold one module
// (a duplicate in the tools folder, a replaced module coming back) or two
// loads run at once. So the runtime shares each compiled module among its
// holders and closes it when the last one lets go.

// compiledKey names one compiled module: its engine (the optimising
// compiler's runtime, or the interpreter's, Runtime.templateRuntime) and
// the SHA-256 of its bytes.
type compiledKey struct {
	interpreted bool
	sum         [sha256.Size]byte
}

// sharedCompiled is one compiled module and its holders.
type sharedCompiled struct {
	ready    chan struct{} // closed once compiled or err is set
	compiled wazero.CompiledModule
	err      error
	refs     int
}

// compile returns the compiled module of wasm, compiling it with the
// optimising compiler on first use, and a release func that the holder
// calls exactly once instead of closing the module.
func (r *Runtime) compile(ctx context.Context, wasm []byte) (wazero.CompiledModule, func(context.Context) error, error) {
	return r.compileIn(ctx, r.wazero, false, wasm)
}

// interpret is compile in wazero's interpreter (Runtime.templateRuntime):
// for the templates and the interpreter tier (tier.go).
func (r *Runtime) interpret(ctx context.Context, wasm []byte) (wazero.CompiledModule, func(context.Context) error, error) {
	rt, err := r.templateRuntime(ctx)
	if err != nil {
		return nil, nil, err
	}
	return r.compileIn(ctx, rt, true, wasm)
}

// compileIn is compile in the runtime rt, the interpreter's when
// interpreted.
func (r *Runtime) compileIn(ctx context.Context, rt wazero.Runtime, interpreted bool, wasm []byte) (wazero.CompiledModule, func(context.Context) error, error) {
	key := compiledKey{interpreted, sha256.Sum256(wasm)}
	r.mu.Lock()
	if r.compiled == nil {
		r.compiled = map[compiledKey]*sharedCompiled{}
	}
	s, ok := r.compiled[key]
	if !ok {
		s = &sharedCompiled{ready: make(chan struct{})}
		r.compiled[key] = s
	}
	s.refs++
	r.mu.Unlock()
	if !ok {
		s.compiled, s.err = rt.CompileModule(ctx, wasm)
		close(s.ready)
	} else {
		<-s.ready
	}
	var once sync.Once
	release := func(ctx context.Context) (err error) {
		once.Do(func() {
			r.mu.Lock()
			s.refs--
			last := s.refs == 0
			if last {
				delete(r.compiled, key)
			}
			r.mu.Unlock()
			if last && s.compiled != nil {
				err = s.compiled.Close(ctx)
			}
		})
		return err
	}
	if s.err != nil {
		return nil, nil, errors.Join(s.err, release(ctx))
	}
	return s.compiled, release, nil
}
