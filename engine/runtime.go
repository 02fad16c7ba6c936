package engine

import (
	"os"
	"runtime/debug"
)

// gcPercent is the collector's target the executables run with. A query
// allocates fresh Arrow buffers for every batch and drops them a stage
// later, so the default (100) collects far more often than the live heap
// needs: measured on the 2M-row full scan (engine BenchmarkFullScan, one
// thread), 100 -> 482 ms, 200 -> 399 ms, 400 -> 382 ms. 200 takes most of
// that for a heap at most about three times the live one.
const gcPercent = 200

// TuneRuntime sets the collector for a clink process (clinksh,
// clink-kernel), unless the user chose one with GOGC. A library embedding
// the engine keeps its own settings: only the executables call this.
func TuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
