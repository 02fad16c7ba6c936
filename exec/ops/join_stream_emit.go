package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// emit turns the pairs of one arriving batch of input s into output: a
// born-columnar record when the join is an append-only INNER join allowed
// to (every pair has both rows, the state side held as records), else rows.
func (j *StreamJoin) emit(ctx context.Context, s int, in joinInput, pairs []joinPair, out exec.Emitter) error {
	if len(pairs) == 0 {
		return nil
	}
	if j.columnarOut && in.rec != nil && j.side[1-s].rowChunks == 0 {
		if j.damper.Try() {
			rec, err := j.gatherPairs(s, in.rec, pairs)
			if err != nil {
				return err
			}
			j.damper.Observe(len(pairs))
			j.emitsColumnar++
			return emitRecord(ctx, out, rec)
		}
		j.emitsHeldBack++
	}
	off := 0
	if j.changelog {
		off = 1
	}
	// The other input may not have sent a batch yet: its width is what
	// the output leaves.
	width := j.spec.Out.NumFields()
	nl := len(j.valCols[0])
	if s == 1 {
		nl = width - off - len(j.valCols[1])
	}
	cells := make([]any, len(pairs)*width)
	rows := make([]exec.Row, len(pairs))
	other := j.side[1-s]
	for k, p := range pairs {
		row := exec.Row(cells[k*width : (k+1)*width : (k+1)*width])
		if j.changelog {
			row[0] = p.kind
		}
		// The arriving row's columns and the held row's, each at its side.
		inAt, stAt := off, off+nl
		if s == 1 {
			inAt, stAt = off+nl, off
		}
		if p.in >= 0 {
			for x, c := range j.valCols[s] {
				row[inAt+x] = in.value(p.in, c)
			}
		}
		if p.st >= 0 {
			for x, c := range j.valCols[1-s] {
				row[stAt+x] = other.value(p.st, c)
			}
		}
		rows[k] = row
	}
	return emitRows(ctx, out, j.spec.Out, rows)
}

// gatherPairs builds the output record of an append-only INNER join: the
// arriving record's rows gathered by index, the held rows gathered across
// the state's records.
func (j *StreamJoin) gatherPairs(s int, rec arrow.RecordBatch, pairs []joinPair) (arrow.RecordBatch, error) {
	other := j.side[1-s]
	idx := make([]int32, len(pairs))
	refs := make([]cellRef, len(pairs))
	for k, p := range pairs {
		idx[k] = p.in
		en := other.entries[p.st]
		refs[k] = cellRef{arr: en.chunk, row: en.row}
	}
	srcs := make([]arrow.Array, len(other.chunks))
	inCols := make([]arrow.Array, 0, rec.NumCols())
	var stCols []arrow.Array
	release := func() {
		for _, c := range inCols {
			c.Release()
		}
		for _, c := range stCols {
			c.Release()
		}
	}
	for c := 0; c < int(rec.NumCols()); c++ {
		a, err := gather(j.mem, rec.Column(c), idx)
		if err != nil {
			release()
			return nil, fmt.Errorf("stream join: column %q: %w", rec.Schema().Field(c).Name, err)
		}
		inCols = append(inCols, a)
	}
	for _, c := range j.valCols[1-s] {
		var dt arrow.DataType
		for i, ch := range other.chunks {
			srcs[i] = nil
			if !ch.dropped && ch.rec != nil {
				srcs[i] = ch.rec.Column(c)
				dt = srcs[i].DataType()
			}
		}
		a, err := gatherRefs(j.mem, dt, srcs, refs)
		if err != nil {
			release()
			return nil, fmt.Errorf("stream join: held column %d: %w", c, err)
		}
		stCols = append(stCols, a)
	}
	cols := append(append([]arrow.Array(nil), inCols...), stCols...)
	if s == 1 {
		cols = append(append([]arrow.Array(nil), stCols...), inCols...)
	}
	defer release()
	if len(cols) != j.spec.Out.NumFields() {
		return nil, fmt.Errorf("stream join: %d columns gathered, the output has %d", len(cols), j.spec.Out.NumFields())
	}
	return array.NewRecordBatch(j.spec.Out, cols, int64(len(pairs))), nil
}

// OnWatermark expires the state the watermark has passed and forwards the
// watermark, held back by the time bound: a pair emitted later can carry a
// held row that much older than the watermark.
func (j *StreamJoin) OnWatermark(ctx context.Context, wm int64, out exec.Emitter) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	tb := j.spec.Time
	if wm == exec.MinWatermark {
		return nil
	}
	if tb == nil {
		// A regular join pairs a new row with held rows of any age: its
		// output has no event time to promise, so only the end passes.
		if wm == exec.MaxWatermark {
			return out.EmitWatermark(ctx, wm)
		}
		return nil
	}
	// A left row at time t can still meet right rows up to t + Hi, and
	// every right row to come is at or after wm.
	if tb.HasHi {
		j.side[0].expire(func(t int64) bool { return wm == exec.MaxWatermark || t == exec.MinWatermark || t+tb.Hi < wm })
	}
	if tb.HasLo {
		j.side[1].expire(func(t int64) bool { return wm == exec.MaxWatermark || t == exec.MinWatermark || t-tb.Lo < wm })
	}
	if err := j.maybeRebuild(); err != nil {
		return err
	}
	if wm == exec.MaxWatermark {
		return out.EmitWatermark(ctx, wm)
	}
	if !tb.HasLo || !tb.HasHi {
		return nil // one side's rows never expire: pairs of any age
	}
	return out.EmitWatermark(ctx, wm-tb.Hold())
}

// maybeRebuild re-keys the state once more of it is dead than alive, so
// expired rows and keys do not accumulate.
func (j *StreamJoin) maybeRebuild() error {
	l, r := j.side[0], j.side[1]
	live := l.liveRows + r.liveRows
	dead := l.dead + r.dead
	// Keys are re-counted from whole chunks, dead rows included, so a key
	// table must also have doubled since the last rebuild to trigger one.
	nk := j.keys.len()
	if !(dead > 1<<16 && dead > live) && !(nk > 1<<16 && nk > 2*live && nk > 2*j.keysRebuilt) {
		return nil
	}
	keys := newKeyIndex(j.keys.kind, false)
	for s := range j.side {
		if err := j.side[s].rebuild(keys, j.keyCols[s]); err != nil {
			return err
		}
	}
	j.keys.release()
	j.keys, j.keysRebuilt = keys, keys.len()
	return nil
}

// Finish of one input: the other side's held rows will never be probed
// again, so they go (unless that side is a changelog, whose retractions
// must still find them).
func (j *StreamJoin) Finish(ctx context.Context, input int, out exec.Emitter) error {
	j.ended[input] = true
	if j.opCol[1-input] < 0 {
		j.side[1-input].clear()
	}
	return nil
}

// Close releases the state.
func (j *StreamJoin) Close() {
	j.side[0].release()
	j.side[1].release()
	// The key index retains the last dictionary it met (release is
	// idempotent, and the index stays for Report after Close).
	j.keys.release()
}
