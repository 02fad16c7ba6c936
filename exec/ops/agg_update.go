package ops

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Row kinds of a changelog, as Flink's SQL client prints them.
const (
	OpInsert       = "+I"
	OpUpdateBefore = "-U"
	OpUpdateAfter  = "+U"
	OpDelete       = "-D"
)

// UpdatingAggregate is GROUP BY over an unbounded input: after every input
// batch it emits what changed as a changelog, +I for a new group and -U
// (the row emitted before) with +U (the new row) for an updated one. The
// output is the group columns, the aggregates, then the row kind in a last
// VARCHAR column ("op").
//
// It is row form by construction: a changelog row carries a kind that a
// born-columnar aggregate result has no column for, and the rows it
// retracts are the rows it emitted. So it ingests rows (the planner's gate
// holds its producers back, reason changelog-output) and its input batches
// are materialised here, counted at this stage.
type UpdatingAggregate struct {
	agg     *HashAggregate // key index and accumulators
	out     *arrow.Schema
	keyRows []exec.Row // each group's key values, by group id
	last    []exec.Row // each group's last emitted row (nil: none yet)
	touched []int32
	seen    []bool
}

// NewUpdatingAggregate returns GROUP BY groupCols computing aggs; out is
// the group columns, the aggregates and a final "op" VARCHAR column.
func NewUpdatingAggregate(groupCols []int, aggs []AggSpec, out *arrow.Schema, mem memory.Allocator) *UpdatingAggregate {
	u := &UpdatingAggregate{out: out}
	if out.NumFields() < 1 || out.Field(out.NumFields()-1).Type.ID() != arrow.STRING {
		u.agg = &HashAggregate{err: fmt.Errorf("updating aggregate: the last output column must be the VARCHAR row kind")}
		return u
	}
	fs := out.Fields()
	u.agg = NewHashAggregate(groupCols, aggs, arrow.NewSchema(fs[:len(fs)-1], nil), mem)
	return u
}

// Kind implements exec.Operator.
func (u *UpdatingAggregate) Kind() string { return "updating_aggregate" }

// Capabilities: rows in, rows out (see the type), each row with its kind.
func (u *UpdatingAggregate) Capabilities() exec.Capabilities {
	return exec.Capabilities{ChangelogOutput: true}
}

// Process folds the batch's rows and emits the changes they made.
func (u *UpdatingAggregate) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	h := u.agg
	if err := h.bind(b.Schema()); err != nil {
		return err
	}
	if h.keys == nil {
		h.grow()
		u.grow(1)
	}
	u.touched = u.touched[:0]
	for ri, r := range b.Rows() {
		g, created, err := h.foldRow(r, ri)
		if err != nil {
			return err
		}
		if created {
			u.grow(h.ngroups)
			u.keyRows[g] = append(exec.Row(nil), h.keyVals...)
		}
		if !u.seen[g] {
			u.seen[g] = true
			u.touched = append(u.touched, g)
		}
	}
	return u.emitChanges(ctx, out)
}

func (u *UpdatingAggregate) grow(n int) {
	for len(u.keyRows) < n {
		u.keyRows = append(u.keyRows, exec.Row{})
		u.last = append(u.last, nil)
		u.seen = append(u.seen, false)
	}
}

// emitChanges emits, in the order groups were first touched in the batch,
// +I or -U/+U for each touched group whose result changed.
func (u *UpdatingAggregate) emitChanges(ctx context.Context, out exec.Emitter) error {
	var rows []exec.Row
	for _, g := range u.touched {
		u.seen[g] = false
		row := make(exec.Row, 0, u.out.NumFields())
		row = append(row, u.keyRows[g]...)
		for _, a := range u.agg.accs {
			row = append(row, a.value(int(g)))
		}
		prev := u.last[g]
		if prev != nil && reflect.DeepEqual(prev, row) {
			continue // e.g. MAX unchanged: nothing to say
		}
		if prev != nil {
			rows = append(rows, append(append(exec.Row(nil), prev...), OpUpdateBefore))
			rows = append(rows, append(append(exec.Row(nil), row...), OpUpdateAfter))
		} else {
			rows = append(rows, append(append(exec.Row(nil), row...), OpInsert))
		}
		u.last[g] = row
	}
	if len(rows) == 0 {
		return nil
	}
	return emitRowChunks(ctx, out, u.out, rows)
}

// OnWatermark forwards the watermark: every change it covers was emitted
// with the batch that caused it.
func (u *UpdatingAggregate) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	return out.EmitWatermark(ctx, wm)
}

// Finish has nothing left to emit: the changelog is complete.
func (u *UpdatingAggregate) Finish(context.Context, int, exec.Emitter) error { return u.agg.err }

// Close releases the state.
func (u *UpdatingAggregate) Close() { u.agg.Close() }
