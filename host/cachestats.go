package host

import "sync/atomic"

// CacheStats counts a runtime's lookups in its cache folder
// (Config.CacheDir) since it was made; a runtime without one counts none.
//
// A code lookup is a Load deciding how to compile a module's final bytes:
// a hit when the tier marker says wazero's compilation cache holds their
// optimised code (the compile is then a read of the cache), a miss when
// it does not (an optimising compile, or the interpreter tier first). A
// marker whose entry was evicted from wazero's cache since is counted a
// hit, although that load compiles: wazero does not say which it did.
//
// An image lookup is a Load of a module that can be imaged, looking for
// the memory image its initialiser left: a hit skips running the
// initialiser (a template run), a miss runs it.
//
// A load lookup is a Load looking for what instrumenting the module gave
// (loadcache.go): a hit skips instrumenting it and finds its image too
// (counted an image hit as well), a miss instruments it. A runtime
// without a build ID to key the entries by counts none.
type CacheStats struct {
	CodeHits, CodeMisses   uint64
	ImageHits, ImageMisses uint64
	LoadHits, LoadMisses   uint64
}

// cacheCounters are a runtime's CacheStats, kept atomically.
type cacheCounters struct {
	codeHits, codeMisses, imageHits, imageMisses, loadHits, loadMisses atomic.Uint64
}

// count adds one lookup to hits or misses.
func count(hit bool, hits, misses *atomic.Uint64) {
	if hit {
		hits.Add(1)
	} else {
		misses.Add(1)
	}
}

// CacheStats returns the runtime's cache lookup counters.
func (r *Runtime) CacheStats() CacheStats {
	c := &r.cache
	return CacheStats{
		CodeHits: c.codeHits.Load(), CodeMisses: c.codeMisses.Load(),
		ImageHits: c.imageHits.Load(), ImageMisses: c.imageMisses.Load(),
		LoadHits: c.loadHits.Load(), LoadMisses: c.loadMisses.Load(),
	}
}
