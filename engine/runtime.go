package engine

import (
	"os"
	"runtime/debug"
)

// gcPercent is the collector's target the executables run with. A query
// allocates fresh buffers for every batch and drops them a stage later, so
// the default (100) collects far more often than the live heap needs, and
// at parallelism > 1 each collection's stop-the-world also waits for the
// other core to leave its snappy decompression (assembly, which cannot be
// preempted). Measured on the 2M-row full scan (engine BenchmarkFullScan,
// one thread): 100 -> 482 ms, 200 -> 399 ms, 400 -> 382 ms; and in the bench
// module at two threads, three alternating rounds, 200 against 400: filter
// 34-37 ms against 30-35, GROUP BY url 37-40 against 30-34, GROUP BY auction
// 44-47 against 41-43, the join 75-80 against 66-69.
const gcPercent = 400

// TuneRuntime sets the collector for a clink process (clinksh,
// clink-kernel, the bench), unless the user chose with GOGC or
// GOMEMLIMIT. A library embedding the engine keeps its own settings: only
// the executables call this.
func TuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The Go heap is held to a soft limit (the collector runs more often
		// as the heap nears it), so a heap allowed to grow to five times the
		// live one cannot run the machine out of memory when the live state
		// is large; it follows the query memory budget (memlimit.go).
		runtimeTuned.Store(true)
		applyGCLimit(defaultMemoryLimit())
	}
}
