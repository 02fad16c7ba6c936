package shuffle

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Scratch holds Split's working buffers between calls, so a steady stream
// of batches allocates them once (sized to the largest batch seen) rather
// than growing them per batch. Not safe for concurrent use.
type Scratch struct {
	hashes  []uint64
	targets []uint16 // each row's target
	idx     []int32  // row indexes grouped by target (a counting sort)
	starts  []int32  // target t's indexes are idx[starts[t]:starts[t+1]]
	out     []arrow.RecordBatch
	plans   []colPlan
	cols    []arrow.Array
	seg     [1]segment
	segs    []segment
}

// grow sizes the per-row buffers for n rows and the per-target ones for
// targets, allocating only when a buffer is too short, and exactly once.
func (s *Scratch) grow(n, targets int) {
	if cap(s.hashes) < n {
		s.hashes = make([]uint64, n)
		s.targets = make([]uint16, n)
		s.idx = make([]int32, n)
	}
	if cap(s.starts) < targets+1 {
		s.starts = make([]int32, targets+1)
		s.out = make([]arrow.RecordBatch, targets)
	}
}

// maxTargets bounds targets to what a row's uint16 target slot holds; more
// than KeyGroups targets leave some empty anyway.
const maxTargets = 1 << 16

// Split partitions rec by key into one record per target: result[t] holds,
// in input order, the rows whose key hash maps to t (TargetOf), or is nil
// when no row does. It takes one pass to route every row into an index list
// per target and then one gather per non-empty target; no row is
// materialised. The records are the caller's to Release; the returned slice
// belongs to scratch and is overwritten by the next Split with it.
func Split(mem memory.Allocator, rec arrow.RecordBatch, keyCols []int, targets int, scratch *Scratch) ([]arrow.RecordBatch, error) {
	if targets < 1 || targets > maxTargets {
		return nil, fmt.Errorf("shuffle: split into %d targets: want 1..%d", targets, maxTargets)
	}
	if err := checkKeys(rec.Schema(), keyCols); err != nil {
		return nil, err
	}
	if scratch == nil {
		scratch = &Scratch{}
	}
	starts, idx, whole := route(rec, keyCols, targets, scratch)
	out := scratch.out[:targets]
	clear(out)
	if whole >= 0 {
		rec.Retain()
		out[whole] = rec
		return out, nil
	}
	for t := range targets {
		lo, hi := starts[t], starts[t+1]
		if lo == hi {
			continue
		}
		sub, err := gatherRecord(mem, rec, idx[lo:hi], scratch)
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("shuffle: split target %d: %w", t, err)
		}
		out[t] = sub
	}
	return out, nil
}

// route computes every row's target and groups the row indexes by target:
// target t's rows are idx[starts[t]:starts[t+1]], in input order. When all
// rows go to one target, whole is that target and idx is not filled (the
// input is that target's batch, no copy needed); otherwise whole is -1.
// targets and keyCols must be valid.
func route(rec arrow.RecordBatch, keyCols []int, targets int, scratch *Scratch) (starts, idx []int32, whole int) {
	n := int(rec.NumRows())
	scratch.grow(n, targets)
	starts = scratch.starts[:targets+1]
	clear(starts)
	if n == 0 {
		return starts, nil, -1
	}
	if targets == 1 {
		starts[1] = int32(n)
		return starts, nil, 0
	}
	// key hash -> key group -> target through a table, so the per-row work
	// is a mask and a load.
	var groupTarget [KeyGroups]uint16
	for g := range groupTarget {
		groupTarget[g] = uint16(TargetOf(uint64(g), targets))
	}
	hashes := HashColumns(rec, keyCols, scratch.hashes[:n])
	tg := scratch.targets[:n]
	counts := starts[1:]
	for i, h := range hashes {
		t := groupTarget[h%KeyGroups]
		tg[i] = t
		counts[t]++
	}
	// Counting sort of row indexes by target, stable. next[t] is where
	// target t's next index goes; counts become the ends, i.e. starts[t+1].
	var nextBuf [64]int32
	next := nextBuf[:0]
	if targets > len(nextBuf) {
		next = make([]int32, targets)
	} else {
		next = nextBuf[:targets]
	}
	pos := int32(0)
	whole = -1
	for t := range targets {
		if int(counts[t]) == n {
			whole = t
		}
		next[t] = pos
		pos += counts[t]
		counts[t] = pos
	}
	if whole >= 0 {
		return starts, nil, whole
	}
	idx = scratch.idx[:n]
	for i, t := range tg {
		idx[next[t]] = int32(i)
		next[t]++
	}
	return starts, idx, -1
}

func checkKeys(schema *arrow.Schema, keyCols []int) error {
	if len(keyCols) == 0 {
		return fmt.Errorf("shuffle: no key columns")
	}
	for _, c := range keyCols {
		if c < 0 || c >= schema.NumFields() {
			return fmt.Errorf("shuffle: key column %d out of range: the batch has %d columns", c, schema.NumFields())
		}
	}
	return nil
}

func releaseAll(recs []arrow.RecordBatch) {
	for i, r := range recs {
		if r != nil {
			r.Release()
			recs[i] = nil
		}
	}
}
