package engine

import (
	"runtime/debug"
	"testing"
)

// TestTuneRuntime: the executables' collector settings, and that GOGC and
// GOMEMLIMIT set by the user win.
func TestTuneRuntime(t *testing.T) {
	oldPct := debug.SetGCPercent(100)
	oldLim := debug.SetMemoryLimit(-1)
	defer func() {
		debug.SetGCPercent(oldPct)
		debug.SetMemoryLimit(oldLim)
	}()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	TuneRuntime()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
	total := totalMemory()
	if total == 0 {
		t.Fatal("total memory unknown on this machine")
	}
	if got, want := debug.SetMemoryLimit(-1), int64(float64(total)*memoryLimitShare); got != want {
		t.Errorf("memory limit %d, want %d (%.2f of %d)", got, want, memoryLimitShare, total)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 62)
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	TuneRuntime()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want the user's 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<62 {
		t.Errorf("with GOMEMLIMIT set: limit changed to %d", got)
	}
}
