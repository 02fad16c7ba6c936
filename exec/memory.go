package exec

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// MemoryBudget is one query's memory limit (SET 'execution.memory-limit').
// The operators whose state grows with their input (hash aggregation, the
// hash join's build side, sorts) reserve against it as they grow; when a
// reservation is refused they spill to files under SpillDir, or fail with
// a *MemoryLimitError naming themselves and the limit. It counts operator
// state, not every byte the process holds: batches in flight, scan buffers
// and garbage not yet collected are the headroom between the budget and
// the Go runtime's soft limit.
type MemoryBudget struct {
	limit    int64
	spillDir string
	used     atomic.Int64
	peak     atomic.Int64
}

// NewMemoryBudget is a budget of limit bytes (<= 0: unlimited) whose
// operators spill under spillDir ("": os.TempDir()).
func NewMemoryBudget(limit int64, spillDir string) *MemoryBudget {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	return &MemoryBudget{limit: limit, spillDir: spillDir}
}

// Limit is the budget in bytes (math.MaxInt64: unlimited).
func (b *MemoryBudget) Limit() int64 { return b.limit }

// Used is what the reservations hold now.
func (b *MemoryBudget) Used() int64 { return b.used.Load() }

// Peak is the most the reservations held at once.
func (b *MemoryBudget) Peak() int64 { return b.peak.Load() }

// SpillDir is where spill files go ("": the system's temp dir).
func (b *MemoryBudget) SpillDir() string { return b.spillDir }

// take reserves n bytes, or reports false leaving nothing taken.
func (b *MemoryBudget) take(n int64) bool {
	u := b.used.Add(n)
	if u > b.limit {
		b.used.Add(-n)
		return false
	}
	b.notePeak(u)
	return true
}

// add reserves n bytes whatever the limit says.
func (b *MemoryBudget) add(n int64) { b.notePeak(b.used.Add(n)) }

func (b *MemoryBudget) notePeak(u int64) {
	for p := b.peak.Load(); u > p && !b.peak.CompareAndSwap(p, u); p = b.peak.Load() {
	}
}

// chunk is the step reservations grow by: 1/32 of the limit between 1 and
// 16 MiB, so a growing table asks the shared counter a few dozen times,
// not once per row or batch, and two operators cannot strand much of a
// small budget in unused chunks.
func (b *MemoryBudget) chunk() int64 {
	return min(max(b.limit/32, 1<<20), 16<<20)
}

// floor is what every reservation is granted even when the budget is
// spent: 1/16 of the limit, at most 16 MiB. An operator that cannot spill
// but holds little (the one-group aggregate above a spilling GROUP BY)
// must not fail because a spilling operator holds the budget, and a
// spilling operator holding its floor still makes progress.
func (b *MemoryBudget) floor() int64 { return min(b.limit/16, 16<<20) }

// Reservation is one operator's share of a budget. It is used by one
// goroutine at a time (its operator's); the budget it draws from is shared.
// A nil *Reservation (no budget) grants everything.
type Reservation struct {
	budget *MemoryBudget
	op     string
	held   int64
}

// Reserve opens a reservation for op, the operator as the user knows it
// ("GROUP BY", "ORDER BY", "JOIN build"), named by its errors. A nil
// budget gives a nil reservation, which grants everything.
func (b *MemoryBudget) Reserve(op string) *Reservation {
	if b == nil {
		return nil
	}
	return &Reservation{budget: b, op: op}
}

// Held is the bytes the reservation holds.
func (r *Reservation) Held() int64 {
	if r == nil {
		return 0
	}
	return r.held
}

// Resize makes the reservation cover need bytes: growing in chunks (a
// refused chunk is retried for exactly what is missing), shrinking when
// need falls more than a chunk below what is held. A refusal is a
// *MemoryLimitError and leaves the reservation as it was.
func (r *Reservation) Resize(need int64) error {
	if r == nil {
		return nil
	}
	switch {
	case need > r.held && need <= r.budget.floor():
		// Granted whatever the others hold (see floor), a chunk at a time.
		grant := max(need, min(r.budget.chunk(), r.budget.floor()))
		r.budget.add(grant - r.held)
		r.held = grant
	case need > r.held:
		grow := need - r.held
		if c := r.budget.chunk(); grow < c && r.budget.take(c) {
			r.held += c
			return nil
		}
		if !r.budget.take(grow) {
			return &MemoryLimitError{Op: r.op, Limit: r.budget.limit}
		}
		r.held += grow
	case r.held-need > r.budget.chunk():
		r.budget.used.Add(need - r.held)
		r.held = need
	}
	return nil
}

// Force makes the reservation cover need bytes even past the limit: for
// state that already exists when a reservation is refused (an aggregate
// that then stops growing and spills), so that the budget's other users
// see it taken.
func (r *Reservation) Force(need int64) {
	if r == nil || need <= r.held {
		return
	}
	r.budget.add(need - r.held)
	r.held = need
}

// Release gives everything held back to the budget.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	r.budget.used.Add(-r.held)
	r.held = 0
}

// MemoryLimitError is a query that needs more than its memory budget where
// spilling cannot help (or has been tried to its depth).
type MemoryLimitError struct {
	Op    string // "GROUP BY", "ORDER BY", "JOIN build"
	Limit int64
	// Why says why spilling could not help ("one group's DISTINCT set"), if
	// known.
	Why string
}

func (e *MemoryLimitError) Error() string {
	msg := fmt.Sprintf("%s needs more than the memory limit of %s (execution.memory-limit)", e.Op, FormatBytes(e.Limit))
	if e.Why != "" {
		msg += ": " + e.Why
	}
	return msg + "; raise it with SET 'execution.memory-limit' = '...'"
}

type budgetKey struct{}

// WithMemoryBudget returns ctx carrying b, which the operators running
// under ctx reserve against.
func WithMemoryBudget(ctx context.Context, b *MemoryBudget) context.Context {
	if b == nil {
		return ctx
	}
	return context.WithValue(ctx, budgetKey{}, b)
}

// MemoryBudgetFrom is ctx's budget, or nil (unlimited, no spilling).
func MemoryBudgetFrom(ctx context.Context) *MemoryBudget {
	b, _ := ctx.Value(budgetKey{}).(*MemoryBudget)
	return b
}

// ParseBytes reads a size such as '2gb', '512 MB', '1.5g', '100k' or a
// plain number of bytes. Units are binary (1 kb = 1024 bytes), as memory
// is counted.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a size such as '2gb' or '512mb'", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want b, kb, mb, gb or tb)", s, unit)
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}

// FormatBytes writes n as the user reads it: "2.0 GB", "256.0 MB".
func FormatBytes(n int64) string {
	if n == math.MaxInt64 {
		return "unlimited"
	}
	units := []string{"B", "KB", "MB", "GB", "TB"}
	f := float64(n)
	u := 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}
