package engine

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/clink-sql/clink/exec"
)

// memoryBudgetShare is the default 'execution.memory-limit': half of the
// memory the process may use (the smaller of the machine's RAM and its
// cgroup's limit). Half, because the budget counts operator state (hash
// tables, sort buffers) and not everything a query holds: batches in
// flight, scan buffers and the garbage a collector running at GOGC=400
// leaves between cycles fill the other half's first part, up to the
// runtime's soft limit (gcLimitShare), and the rest is for the shell, the
// kernel and whatever else runs beside them.
const memoryBudgetShare = 0.5

// gcLimitShare is the runtime's soft memory limit as a share of the
// process's memory: 1.5 times the default budget.
const gcLimitShare = 0.75

// machineMemory is the memory the process may use: the smaller of the
// machine's RAM and the cgroup's limit (0: unknown).
func machineMemory() uint64 {
	total := totalMemory()
	if c := cgroupMemoryLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return total
}

// cgroupMemoryLimit reads the cgroup v2 (memory.max) or v1
// (memory.limit_in_bytes) limit of the process's cgroup (0: none).
func cgroupMemoryLimit() uint64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v == 0 || v >= 1<<60 { // "max", or v1's "no limit"
			return 0
		}
		return v
	}
	return 0
}

// defaultLimit is SetDefaultMemoryLimit's value (0: not set; -1:
// unlimited).
var defaultLimit atomic.Int64

// SetDefaultMemoryLimit sets the budget of sessions that do not SET
// 'execution.memory-limit' (clinksh --memory-limit), in the setting's
// syntax, and the runtime's soft limit to match.
func SetDefaultMemoryLimit(v string) error {
	n, err := parseMemoryLimit(v)
	if err != nil {
		return err
	}
	if n == 0 {
		defaultLimit.Store(-1)
	} else {
		defaultLimit.Store(n)
	}
	applyGCLimit(n)
	return nil
}

// defaultMemoryLimit is the budget without SET: SetDefaultMemoryLimit's,
// else CLINK_MEMORY_LIMIT if set (how a kernel spec or a script chooses
// it), else memoryBudgetShare of machineMemory (0: unlimited when that is
// unknown).
func defaultMemoryLimit() int64 {
	switch n := defaultLimit.Load(); {
	case n > 0:
		return n
	case n < 0:
		return 0
	}
	if v := os.Getenv("CLINK_MEMORY_LIMIT"); v != "" {
		if n, err := exec.ParseBytes(v); err == nil {
			return n
		}
	}
	return int64(float64(machineMemory()) * memoryBudgetShare)
}

// memoryLimit is the session's budget in bytes (<= 0: unlimited).
func (s *Session) memoryLimit() int64 {
	if v, ok := s.sets["execution.memory-limit"]; ok {
		n, _ := parseMemoryLimit(v) // checked by SET
		return n
	}
	return defaultMemoryLimit()
}

// memoryBudget is a new budget for one query.
func (s *Session) memoryBudget() *exec.MemoryBudget {
	return exec.NewMemoryBudget(s.memoryLimit(), s.sets["execution.spill-dir"])
}

// parseMemoryLimit reads SET 'execution.memory-limit': a size, or
// 'unlimited' / '0' (no budget: nothing spills, as before the budget).
func parseMemoryLimit(v string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "unlimited", "off", "none", "0":
		return 0, nil
	}
	n, err := exec.ParseBytes(v)
	if err != nil {
		return 0, err
	}
	if n < 1<<20 {
		return 0, fmt.Errorf("%s is below the smallest limit, 1 MB", exec.FormatBytes(n))
	}
	return n, nil
}

// runtimeTuned is set by TuneRuntime when the process may choose the
// collector's soft limit (an executable, without GOMEMLIMIT).
var runtimeTuned atomic.Bool

// applyGCLimit keeps the runtime's soft memory limit consistent with a
// budget SET in a session: 1.5 times the budget plus 64 MB for the
// process itself, at most 90% of the machine's memory.
func applyGCLimit(budget int64) {
	if !runtimeTuned.Load() {
		return
	}
	total := int64(machineMemory())
	limit := int64(float64(total) * gcLimitShare)
	if budget > 0 {
		limit = budget*3/2 + 64<<20
		if total > 0 {
			limit = min(limit, total*9/10)
		}
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}
