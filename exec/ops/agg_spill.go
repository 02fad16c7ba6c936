package ops

import (
	"context"
	"errors"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// GROUP BY under a memory budget: a hybrid hash aggregation.
//
// While its state fits the budget the aggregate is the in-memory one.
// When a reservation is refused it freezes its key table: from then on a
// row whose key is already a group is folded in as before, and a row with
// any other key is written, whole, to one of spillFanout partition files
// chosen by a hash of its key. The groups in memory are therefore complete
// (every row of their key either came before the freeze or found the key
// after it) and disjoint from the spilled keys, so Finish emits them, lets
// their memory go, and aggregates each partition with a fresh aggregate
// (which may spill again, under a new hash seed, to maxSpillLevel).
//
// Chosen over spilling sorted runs of partial aggregates and merging them:
// spilled raw rows need no serialised form of every accumulator's state
// (DISTINCT sets, 128-bit and decimal sums, variance moments, MIN/MAX of
// strings), the keys that stayed in memory keep aggregating without any
// I/O, and a partition is aggregated by exactly the code that aggregates
// in memory, so the answers cannot drift apart. The cost: a key with many
// rows that arrives only after the freeze is written row by row rather
// than as one partial state.

const (
	spillFanout = 16
	// maxSpillLevel is how often a partition may be partitioned again:
	// 16^3 = 4096 partitions is far more than any input that is not one
	// key's rows needs.
	maxSpillLevel = 3
)

// aggSpill is the state of an aggregate that froze its table.
type aggSpill struct {
	dir   *spillDir
	seed  maphash.Seed
	parts [spillFanout]spillBuffer
	rows  [spillFanout][]int32 // per batch: the rows going to each part
	buf   []byte
}

// AllowSpill lets the aggregate spill to disk when its query's memory
// budget refuses it more (the batch GROUP BY; an aggregate inside a
// streaming operator must answer per update and cannot). It returns h.
func (h *HashAggregate) AllowSpill() *HashAggregate {
	h.canSpill = true
	return h
}

// PartialFlush marks the first phase of a two-phase GROUP BY: under memory
// pressure it emits the groups it has and starts afresh, since the second
// phase merges a key's partial results from any number of emissions (as
// it does from several subtasks), which costs no disk at all. It returns
// h.
func (h *HashAggregate) PartialFlush() *HashAggregate {
	h.partial = true
	return h
}

// flushPartial emits the groups so far and starts over with none.
func (h *HashAggregate) flushPartial(ctx context.Context, out exec.Emitter) error {
	if err := h.emitGroups(ctx, out); err != nil {
		return err
	}
	h.releaseState()
	fresh := NewHashAggregate(h.groupCols, h.aggs, h.out, h.mem)
	if err := fresh.bind(h.in); err != nil {
		fresh.Close()
		return err
	}
	h.keys, h.keyBld, h.accs, h.ngroups = fresh.keys, fresh.keyBld, fresh.accs, 0
	h.spilled.flushes++
	return nil
}

// Report implements exec.Reporter: what spilled, if anything.
func (h *HashAggregate) Report() exec.OperatorReport {
	return exec.OperatorReport{Counters: h.spilled.counters()}
}

// stateBytes estimates the aggregate's in-memory state.
func (h *HashAggregate) stateBytes() int64 {
	n := int64(h.ngroups)
	var per int64
	b := h.keys.memBytes()
	for _, a := range h.accs {
		per += accGroupBytes(a)
		if d, ok := a.(*distinctAcc); ok {
			b += d.memBytes()
		}
	}
	// growTo doubles state slices: the old one lives until the copy is done.
	b += n * per * 3 / 2
	for _, bld := range h.keyBld {
		b += builderBytes(bld)
	}
	return b
}

// account reserves the state's estimate against ctx's budget; when it is
// refused, the aggregate spills if it may, or fails naming the limit.
func (h *HashAggregate) account(ctx context.Context, out exec.Emitter) error {
	if !h.resInit {
		h.resInit = true
		op := "GROUP BY"
		if len(h.groupCols) == 0 {
			op = "aggregate"
		}
		h.res = exec.MemoryBudgetFrom(ctx).Reserve(op)
	}
	if h.res == nil {
		return nil
	}
	need := h.stateBytes()
	err := h.res.Resize(need)
	if err == nil {
		return nil
	}
	var lim *exec.MemoryLimitError
	if errors.As(err, &lim) {
		switch {
		case h.partial && h.keys != nil && out != nil:
			return h.flushPartial(ctx, out)
		case !h.canSpill:
			lim.Why = "this aggregate cannot spill to disk"
		case h.keys == nil:
			lim.Why = "without GROUP BY there is one group, which cannot be split (its DISTINCT sets grew too large)"
		case h.spill != nil && !h.hasDistinct():
			// Only DISTINCT sets grow without bound once the table is
			// frozen; the rest is lookup scratch (a general table a
			// packed key falls back to), held as it comes.
			h.res.Force(need)
			return nil
		case h.spill != nil:
			lim.Why = "the groups kept in memory grew after spilling began (DISTINCT sets)"
		case h.level >= maxSpillLevel:
			lim.Why = "a partition still does not fit after spilling to a depth of 3 (4096 partitions)"
		default:
			// The state exists: hold it (the budget's other users see it
			// taken) and stop growing it.
			h.res.Force(need)
			h.startSpill(ctx)
			return nil
		}
	}
	return err
}

func (h *HashAggregate) startSpill(ctx context.Context) {
	sp := &aggSpill{dir: newSpillDir(exec.MemoryBudgetFrom(ctx)), seed: maphash.MakeSeed()}
	schema := plainSchema(h.in)
	for p := range sp.parts {
		sp.parts[p] = newSpillBuffer(sp.dir, schema, h.mem)
	}
	h.spill = sp
	h.spilled.partitions += spillFanout
}

// spillColumnar sends rec's rows whose ids are -1 (keys not in the frozen
// table) to their partitions.
func (h *HashAggregate) spillColumnar(rec arrow.RecordBatch, ids []int32) error {
	sp := h.spill
	for p := range sp.rows {
		sp.rows[p] = sp.rows[p][:0]
	}
	for i, g := range ids {
		if g >= 0 {
			continue
		}
		buf := sp.buf[:0]
		for c := range h.keyCols {
			buf, _ = appendKeyArr(buf, h.keyCols[c], i)
		}
		sp.buf = buf
		p := maphash.Bytes(sp.seed, buf) % spillFanout
		sp.rows[p] = append(sp.rows[p], int32(i))
	}
	for p := range sp.parts {
		if len(sp.rows[p]) > 0 {
			if err := sp.parts[p].appendRows(rec, sp.rows[p]); err != nil {
				return err
			}
		}
	}
	return nil
}

// spillRow sends one row-form row (its key not in the frozen table) to its
// partition.
func (h *HashAggregate) spillRow(r exec.Row) error {
	sp := h.spill
	buf := sp.buf[:0]
	for _, v := range h.keyVals {
		buf = appendKeyValue(buf, v)
	}
	sp.buf = buf
	return sp.parts[maphash.Bytes(sp.seed, buf)%spillFanout].appendRow(r)
}

// foldFound is foldRow for a frozen table: the row's group if its key is
// one, else -1 and nothing folded.
func (h *HashAggregate) foldFound(r exec.Row, ri int) (int32, error) {
	h.keyVals = h.keyVals[:0]
	for _, c := range h.groupCols {
		h.keyVals = append(h.keyVals, r[c])
	}
	g, _, err := h.keys.idRow(h.keyVals, false)
	if err != nil || g < 0 {
		return g, err
	}
	for i, a := range h.accs {
		var v any
		if c := h.aggs[i].Col; h.aggs[i].Func != "count_star" {
			v = r[c]
		}
		if err := a.updateRow(v, g); err != nil {
			return 0, aggFailure(h.aggs[i].String(), err)
		}
	}
	return g, nil
}

// finishSpilled aggregates each partition in turn with a fresh aggregate,
// after the groups that stayed in memory have left and let their memory
// go.
func (h *HashAggregate) finishSpilled(ctx context.Context, out exec.Emitter) error {
	sp := h.spill
	h.releaseState()
	for p := range sp.parts {
		part := &sp.parts[p]
		err := part.flush()
		part.release()
		if err != nil {
			return err
		}
	}
	for p := range sp.parts {
		f := sp.parts[p].file
		if f == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := h.finishPartition(ctx, f, out); err != nil {
			return err
		}
		f.close()
	}
	return nil
}

func (h *HashAggregate) finishPartition(ctx context.Context, f *spillFile, out exec.Emitter) error {
	child := NewHashAggregate(h.groupCols, h.aggs, h.out, h.mem)
	child.canSpill, child.level, child.columnarOut = true, h.level+1, h.columnarOut
	defer func() {
		child.Close()
		h.spilled.add(child.spilled)
	}()
	if err := f.replay(ctx, child, 0, out); err != nil {
		return err
	}
	return child.Finish(ctx, 0, out)
}

// releaseState lets go of the in-memory groups (emitted) and their
// reservation.
func (h *HashAggregate) releaseState() {
	for _, b := range h.keyBld {
		b.Release()
	}
	h.keyBld = nil
	h.keys.release()
	h.keys = nil
	for _, a := range h.accs {
		if r, ok := a.(interface{ release() }); ok {
			r.release()
		}
	}
	h.accs = nil
	h.res.Release()
}

// closeSpill removes the spill files (every path) and the partition
// builders.
func (h *HashAggregate) closeSpill() {
	if h.spill == nil {
		return
	}
	for p := range h.spill.parts {
		h.spill.parts[p].release()
	}
	h.spilled.add(h.spill.dir.stats)
	h.spill.dir.remove()
	h.spill = nil
}
