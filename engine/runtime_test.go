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
		runtimeTuned.Store(false)
	}()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	TuneRuntime()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
	t.Setenv("CLINK_MEMORY_LIMIT", "")
	total := int64(machineMemory())
	if total == 0 {
		t.Fatal("total memory unknown on this machine")
	}
	// The soft limit is 1.5 times the default budget (half the memory) and
	// 64 MB, at most 90% of the memory.
	if got, want := debug.SetMemoryLimit(-1), min(total/2*3/2+64<<20, total*9/10); abs64(got-want) > 1<<20 {
		t.Errorf("memory limit %d, want %d (of %d)", got, want, total)
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

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
