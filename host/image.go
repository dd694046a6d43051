package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// Pre-initialised images.
//
// A reactor module (Go's wasip1 c-shared output, for one) runs _initialize
// before its first export: for a Go tool that is tens of millions of
// instructions and most of a fresh instance's cost. Load runs it once, in a
// template instance, captures the memory and every global, and recompiles
// the module with the captured globals as initialisers, the captured size
// as its memory minimum and no data segments. Each call's instance then
// starts from a copy of the captured memory — the same clean state every
// time, so isolation is unchanged — without running _initialize.

// imageTimeout and imageFuel bound the template's _initialize.
const (
	imageTimeout = 10 * time.Second
	imageFuel    = 10_000_000_000
)

var (
	// errNotImaged is returned when a module keeps running its
	// initialiser per call; the reason is wrapped.
	errNotImaged = errors.New("module not pre-initialised")
)

// memoryImage is captured linear memory: the pre-initialised image of an
// imaged module, or the memory a pooled module's instances are reset to
// (see pool.go).
//
// Fresh instances of an imaged module start from buffers that already hold
// it: a used buffer goes back to a restorer goroutine, which copies the
// image into it off the call's path and queues it as ready. A call that
// finds no ready buffer copies the image itself. A pooled instance's memory
// is instead a private mapping of the image's memfd (mapping_linux.go).
type memoryImage struct {
	bytes []byte
	ready chan []byte   // restored buffers, len(bytes) long, zero beyond; nil without a restorer
	dirty chan dirtyBuf // used buffers waiting to be restored
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	fileOnce sync.Once
	file     *imageFile // made on the first mapping
	fileErr  error
}

// dirtyBuf is a used buffer at full capacity and how much of it was used;
// bytes past used are zero.
type dirtyBuf struct {
	buf  []byte
	used int
}

// readyBuffers is how many restored buffers an image keeps: one per worker
// lane of the default platform policy.
const readyBuffers = 2

// maxPooledBytes bounds the buffers kept for reuse, and the memory a module
// without an image may start with and still have its instances pooled.
const maxPooledBytes = 64 << 20

// newMemoryImage returns the image of b with a restorer for fresh
// instances.
func newMemoryImage(b []byte) *memoryImage {
	img := &memoryImage{
		bytes: b,
		ready: make(chan []byte, readyBuffers),
		dirty: make(chan dirtyBuf, readyBuffers),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go img.restore()
	return img
}

// newPristineImage returns the image of b without a restorer: only pooled
// instances start from it.
func newPristineImage(b []byte) *memoryImage { return &memoryImage{bytes: b} }

// restore turns used buffers back into copies of the image until close.
func (img *memoryImage) restore() {
	defer close(img.done)
	for {
		select {
		case <-img.stop:
			return
		case d := <-img.dirty:
			copy(d.buf, img.bytes)
			clear(d.buf[len(img.bytes):d.used])
			select {
			case img.ready <- d.buf[:len(img.bytes)]:
			default:
			}
		}
	}
}

// buffer returns a buffer of n bytes (n ≥ len(img.bytes)) holding the image
// followed by zeros.
func (img *memoryImage) buffer(n uint64) []byte {
	select {
	case b := <-img.ready:
		if uint64(cap(b)) >= n {
			return b[:n] // zero past the image: restore cleared what was used
		}
	default:
	}
	// Headroom: a first memory.grow should not copy the whole image again.
	b := make([]byte, n, max(n, uint64(len(img.bytes)))*3/2)
	copy(b, img.bytes)
	return b
}

// release hands a used buffer to the restorer, or drops it when the
// restorer is busy or the buffer is too large to keep.
func (img *memoryImage) release(buf []byte) {
	if cap(buf) > maxPooledBytes {
		return
	}
	select {
	case img.dirty <- dirtyBuf{buf: buf[:cap(buf)], used: len(buf)}:
	default:
	}
}

// mapping returns a new private mapping of the image, or an error when
// the system has none (the caller then copies).
func (img *memoryImage) mapping() ([]byte, error) {
	img.fileOnce.Do(func() { img.file, img.fileErr = newImageFile(img.bytes) })
	switch {
	case img.fileErr != nil:
		return nil, img.fileErr
	case img.file == nil:
		return nil, errors.New("memory image closed")
	}
	return img.file.mapPrivate(len(img.bytes))
}

// close stops the restorer and waits for it, and closes the memfd (the
// mappings stay valid until unmapped). It is safe to call more than once.
func (img *memoryImage) close() {
	img.once.Do(func() {
		if img.stop != nil {
			close(img.stop)
			<-img.done
		}
		img.fileOnce.Do(func() {}) // no file is made after close
		if img.file != nil {
			img.file.close() //nolint:errcheck // a memfd: close frees the descriptor even when it reports an error, and the mappings stay valid
		}
	})
}

// preinitialised is what preinitialise made of a module.
type preinitialised struct {
	tier  *tier        // the imaged module, compiled for the calls
	image *memoryImage // the memory the initialiser left
}

// tierBuilder compiles the bytes a module's calls run into its first tier
// (Module.firstTier).
type tierBuilder func(ctx context.Context, final []byte) (*tier, error)

// preinitialise runs the start function and, when initialize, _initialize
// in a template instance of the instrumented module (rewritten from wasm)
// and compiles the module imaged from the state they left with build. The
// template runs in the interpreter (Runtime.templateRuntime): only the
// imaged module is compiled with the optimising compiler. A refusal of
// _initialize's signature is ErrExport.
func (r *Runtime) preinitialise(ctx context.Context, wasm, rewritten []byte, opts instrument.Options, info instrument.Info, initialize bool, build tierBuilder) (*preinitialised, error) {
	switch {
	case info.Memory == nil || !info.Memory.Exported || info.Memory.Imported:
		return nil, fmt.Errorf("%w: no exported memory of its own", errNotImaged)
	case len(info.StateOps) > 0:
		// Tables and segments are not captured: an initialiser that
		// changes them would be lost.
		return nil, fmt.Errorf("%w: its code changes tables or segments (%s)", errNotImaged, strings.Join(info.StateOps, ", "))
	}
	cachePath := r.imageCachePath(rewritten)
	cached, ok := readCachedImage(cachePath)
	if cachePath != "" {
		count(ok, &r.cache.imageHits, &r.cache.imageMisses)
	}
	if ok {
		return r.compileImage(ctx, wasm, opts, cached, build)
	}
	rt, err := r.templateRuntime(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotImaged, err)
	}
	compiled, releaseTemplate, err := r.interpret(withYieldListener(ctx, info), rewritten)
	if err != nil {
		return nil, fmt.Errorf("%w: compiling the template: %w", errNotImaged, err)
	}
	defer releaseTemplate(context.Background()) //nolint:errcheck // the template is thrown away: a failed release of its code loses nothing the image needs
	if def, ok := compiled.ExportedFunctions()["_initialize"]; ok && (len(def.ParamTypes()) != 0 || len(def.ResultTypes()) != 0) {
		return nil, fmt.Errorf("%w: _initialize must take and return nothing", ErrExport)
	}
	// The template runs under Load's context, at most imageTimeout, and
	// imageFuel: the yield listener and the host functions stop it there
	// (fuel.go), whether it spends its time in the start function, in
	// _initialize or in host calls.
	runCtx, cancel := context.WithTimeout(ctx, imageTimeout)
	defer cancel()
	s := &callState{ctx: runCtx, limits: Limits{MemoryBytes: r.cfg.MaxMemoryBytes, Fuel: imageFuel}.withDefaults(), log: boundedLog{max: DefaultLogBytes}, logLevel: r.logLevel}
	guestCtx := context.WithValue(runCtx, callStateKey{}, s)
	instCtx := experimental.WithMemoryAllocator(guestCtx, allocator{s: s})
	// The template sees the clocks and random source a call would.
	inst, err := rt.InstantiateModule(instCtx, compiled, (&instance{cur: s}).config())
	if err != nil {
		return nil, s.initFailure("instantiating the template", err)
	}
	defer inst.Close(context.Background()) //nolint:errcheck // the template opens no files (its streams write to its log): closing it frees memory only
	fuel, _ := inst.ExportedGlobal(instrument.FuelGlobal).(api.MutableGlobal)
	if fuel == nil {
		return nil, fmt.Errorf("%w: no fuel global", errNotImaged)
	}
	s.fuel = fuel
	fuel.Set(uint64(imageFuel))
	if initialize {
		if _, err := inst.ExportedFunction("_initialize").Call(guestCtx); err != nil {
			return nil, s.initFailure("_initialize", err)
		}
	}
	// What the host holds for the template is not in the image: an
	// initialiser that left blocks, an input, an output or an error behind
	// would find them gone. (Its WASI descriptors are not either: Go's
	// runtime sets its standard streams non-blocking, which every new
	// instance's are anyway.)
	if s.blocks.size() > 0 || s.inputBytes > 0 || s.hasOutput || s.hasError || len(s.vars) > 0 {
		return nil, fmt.Errorf("%w: its initialiser left host state behind (Extism blocks, an input, an output, an error or variables)", errNotImaged)
	}
	// Nor what a call gives the guest: an initialiser that read the
	// configuration, a variable or the log level would see the item's.
	if s.readsHost {
		return nil, fmt.Errorf("%w: its initialiser read the configuration, a variable or the log level, which are the item's", errNotImaged)
	}
	img := &instrument.Image{Globals: map[uint32]uint64{}}
	for _, g := range info.Globals {
		if g.Imported {
			continue
		}
		eg := inst.ExportedGlobal(g.Export)
		if eg == nil {
			return nil, fmt.Errorf("%w: global %d is not exported", errNotImaged, g.Index)
		}
		img.Globals[g.Index] = eg.Get()
	}
	mem := inst.ExportedMemory("memory")
	size := mem.Size()
	contents, ok := mem.Read(0, size)
	if !ok {
		return nil, fmt.Errorf("%w: reading memory", errNotImaged)
	}
	img.MemoryPages = size >> 16
	c := &cachedImage{image: *img, contents: append([]byte(nil), contents...)}
	// The template is done with: its interpreted code (≈ 30 bytes per
	// byte of a Go guest) goes before the imaged module is compiled. As
	// for the defers (a no-op after these), a failure loses nothing.
	inst.Close(context.Background())      //nolint:errcheck // see above
	releaseTemplate(context.Background()) //nolint:errcheck // see above
	p, err := r.compileImage(ctx, wasm, opts, c, build)
	if err == nil {
		writeCachedImage(cachePath, c)
	}
	return p, err
}

// compileImage compiles the module imaged from c, the state its
// initialiser left, with build.
func (r *Runtime) compileImage(ctx context.Context, wasm []byte, opts instrument.Options, c *cachedImage, build tierBuilder) (*preinitialised, error) {
	imaged := c.imaged
	if imaged == nil {
		img := c.image
		opts.Image = &img
		var err error
		if imaged, _, err = instrument.Rewrite(wasm, opts); err != nil {
			return nil, fmt.Errorf("%w: %w", errNotImaged, err)
		}
		c.imaged = imaged // written with the entry
	}
	enterPhase(ctx, PhaseCompile)
	t, err := build(ctx, imaged)
	if err != nil {
		return nil, fmt.Errorf("%w: compiling the image: %w", errNotImaged, err)
	}
	return &preinitialised{tier: t, image: newMemoryImage(c.contents)}, nil
}

// initFailure wraps an error of the template's start function or
// _initialize: ErrInitBudget when it ran out of time or fuel, errNotImaged
// otherwise (the module then runs its initialiser per call, and fails
// there as it failed here).
func (s *callState) initFailure(what string, err error) error {
	switch f := s.failure(err); f.Code {
	case CodeExecutionTimeout, CodeExecutionLimit:
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return fmt.Errorf("%w: %s did not end by its deadline (Load's context, at most %v): %w", ErrInitBudget, what, imageTimeout, ctxErr)
		}
		return fmt.Errorf("%w: %s ran out of fuel: %w", ErrInitBudget, what, err)
	}
	return fmt.Errorf("%w: %s failed: %w", errNotImaged, what, err)
}
