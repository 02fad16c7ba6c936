package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// tryColumnar reports whether the next emission is built born columnar:
// the planner allows it and the damper has not backed off.
func (j *batchJoin) tryColumnar() bool {
	if !j.columnarOut {
		return false
	}
	if j.damper.Try() {
		return true
	}
	j.emitsHeldBack++ // the damper held this emission back to rows
	return false
}

// observe records a born-columnar emission of n rows.
func (j *batchJoin) observe(n int) {
	j.damper.Observe(n)
	j.emitsColumnar++
}

// emitPairs emits the pairs (lidx[k], ridx[k]) of a probe batch and the
// build side; ridx -1 pads the right columns with NULLs. A columnar batch
// is gathered into a born-columnar record (or, when columnar output is off
// or held back, rows built from its arrays).
func (j *batchJoin) emitPairs(ctx context.Context, pb *probeBatch, lidx, ridx []int32, out exec.Emitter) error {
	if len(lidx) == 0 {
		return nil
	}
	if pb.rec != nil && j.tryColumnar() {
		res, err := j.gatherPairs(pb.rec, lidx, ridx)
		if err != nil {
			return err
		}
		j.observe(len(lidx))
		return emitRecord(ctx, out, res)
	}
	build := j.build.rowForm()
	nLeft, nRight := pb.schema.NumFields(), j.build.schema.NumFields()
	width := nLeft + nRight
	cells := make([]any, len(lidx)*width)
	rows := make([]exec.Row, len(lidx))
	for k, li := range lidx {
		row := exec.Row(cells[k*width : (k+1)*width : (k+1)*width])
		if pb.rec != nil {
			for c := 0; c < nLeft; c++ {
				row[c] = exec.Value(pb.rec.Column(c), int(li))
			}
		} else {
			copy(row, pb.rows[li])
		}
		if ri := ridx[k]; ri >= 0 {
			copy(row[nLeft:], build[ri])
		}
		rows[k] = row
	}
	return emitRows(ctx, out, j.out, rows)
}

func (j *batchJoin) gatherPairs(rec arrow.RecordBatch, lidx, ridx []int32) (arrow.RecordBatch, error) {
	right, err := j.build.columns()
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, 0, j.out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c := 0; c < int(rec.NumCols()); c++ {
		a, err := gather(j.outMem, rec.Column(c), lidx)
		if err != nil {
			return nil, fmt.Errorf("join: left column %q: %w", rec.Schema().Field(c).Name, err)
		}
		cols = append(cols, a)
	}
	for c, col := range right {
		var a arrow.Array
		if j.build.n == 0 {
			a = array.MakeArrayOfNull(j.mem, col.DataType(), len(ridx))
		} else {
			a, err = gather(j.outMem, col, ridx)
			if err != nil {
				return nil, fmt.Errorf("join: right column %q: %w", j.build.schema.Field(c).Name, err)
			}
		}
		cols = append(cols, a)
	}
	if len(cols) != j.out.NumFields() {
		return nil, fmt.Errorf("join: %d left + %d right columns, output has %d", rec.NumCols(), len(right), j.out.NumFields())
	}
	return array.NewRecordBatch(j.out, cols, int64(len(lidx))), nil
}

// emitLeftOnly emits a SEMI, ANTI or MARK join's output for a probe batch
// from each row's outcome: hits (passing matches) and, for a null-aware
// join, unknown (no match, but a comparison with NULL).
func (j *batchJoin) emitLeftOnly(ctx context.Context, pb *probeBatch, hits []int32, unknown []bool, out exec.Emitter) error {
	if j.typ == Mark {
		return j.emitMark(ctx, pb, hits, unknown, out)
	}
	sel := j.sel[:0]
	for i := 0; i < pb.n; i++ {
		keep := hits[i] > 0
		if j.typ == Anti {
			keep = hits[i] == 0 && !unknown[i]
		}
		if keep {
			sel = append(sel, int32(i))
		}
	}
	j.sel = sel
	if len(sel) == 0 {
		return nil
	}
	if pb.rec != nil && j.tryColumnar() {
		var res arrow.RecordBatch
		switch n := len(sel); {
		case n == pb.n:
			res = array.NewRecordBatch(j.out, recordColumns(pb.rec), int64(n))
		case int(sel[n-1]-sel[0])+1 == n: // a contiguous run: a zero-copy slice
			whole := array.NewRecordBatch(j.out, recordColumns(pb.rec), int64(pb.n))
			res = whole.NewSlice(int64(sel[0]), int64(sel[n-1])+1)
			whole.Release()
		default:
			var err error
			if res, err = gatherRecord(j.outMem, j.out, recordColumns(pb.rec), sel); err != nil {
				return fmt.Errorf("join: %w", err)
			}
		}
		j.observe(len(sel))
		return emitRecord(ctx, out, res)
	}
	rows := make([]exec.Row, len(sel))
	if pb.rec == nil {
		for k, i := range sel {
			rows[k] = pb.rows[i] // rows are shared, never mutated
		}
		return emitRows(ctx, out, j.out, rows)
	}
	width := pb.schema.NumFields()
	cells := make([]any, len(sel)*width)
	for k, i := range sel {
		row := exec.Row(cells[k*width : (k+1)*width : (k+1)*width])
		for c := range row {
			row[c] = exec.Value(pb.rec.Column(c), int(i))
		}
		rows[k] = row
	}
	return emitRows(ctx, out, j.out, rows)
}

// emitMark emits every probe row with its mark: TRUE with a match, NULL
// when unknown, else FALSE. Born columnar, the probe's columns are reused
// as they are and only the mark is new.
func (j *batchJoin) emitMark(ctx context.Context, pb *probeBatch, hits []int32, unknown []bool, out exec.Emitter) error {
	if pb.n == 0 {
		return nil
	}
	if pb.rec != nil && j.tryColumnar() {
		b := array.NewBooleanBuilder(j.mem)
		defer b.Release()
		b.Reserve(pb.n)
		for i := 0; i < pb.n; i++ {
			if hits[i] == 0 && unknown[i] {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(hits[i] > 0)
			}
		}
		mark := b.NewArray()
		defer mark.Release()
		cols := append(recordColumns(pb.rec), mark)
		j.observe(pb.n)
		return emitRecord(ctx, out, array.NewRecordBatch(j.out, cols, int64(pb.n)))
	}
	width := pb.schema.NumFields() + 1
	cells := make([]any, pb.n*width)
	rows := make([]exec.Row, pb.n)
	for i := range rows {
		row := exec.Row(cells[i*width : (i+1)*width : (i+1)*width])
		if pb.rec != nil {
			for c := 0; c < width-1; c++ {
				row[c] = exec.Value(pb.rec.Column(c), i)
			}
		} else {
			copy(row, pb.rows[i])
		}
		switch {
		case hits[i] > 0:
			row[width-1] = true
		case !unknown[i]:
			row[width-1] = false
		}
		rows[i] = row
	}
	return emitRows(ctx, out, j.out, rows)
}

// emitUnmatched emits, once the probe input has ended and the build side
// is hashed, a RIGHT or FULL join's build rows that nothing matched, with
// NULLs for the probe's columns (a RIGHT SEMI join's rows that something
// matched, a RIGHT ANTI join's that nothing did, without probe columns):
// born columnar when the planner allows it, in chunks of emitChunk rows.
func (j *batchJoin) emitUnmatched(ctx context.Context, out exec.Emitter) error {
	if !j.typ.padsBuild() || j.unmatchedOut || !j.ended[0] || j.build == nil {
		return nil
	}
	var ridx []int32
	want := j.typ == RightSemi // the rows whose matched flag is this come out
	for r := 0; r < j.build.n; r++ {
		if (j.matched != nil && j.matched[r]) == want {
			ridx = append(ridx, int32(r))
		}
	}
	j.matched, j.keysDone, j.unmatchedOut = nil, nil, true
	nLeft := j.out.NumFields() - j.build.schema.NumFields()
	for start := 0; start < len(ridx); start += emitChunk {
		part := ridx[start:min(start+emitChunk, len(ridx))]
		var err error
		if j.columnarOut {
			err = j.emitUnmatchedColumnar(ctx, nLeft, part, out)
		} else {
			build := j.build.rowForm()
			rows := make([]exec.Row, len(part))
			for k, r := range part {
				row := make(exec.Row, nLeft, j.out.NumFields())
				rows[k] = append(row, build[r]...)
			}
			err = emitRows(ctx, out, j.out, rows)
		}
		if err != nil {
			return err
		}
	}
	if j.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, j.heldWM) // held until now (OnWatermark)
	}
	return nil
}

func (j *batchJoin) emitUnmatchedColumnar(ctx context.Context, nLeft int, ridx []int32, out exec.Emitter) error {
	right, err := j.build.columns()
	if err != nil {
		return err
	}
	cols := make([]arrow.Array, 0, j.out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c := 0; c < nLeft; c++ {
		cols = append(cols, array.MakeArrayOfNull(j.mem, j.out.Field(c).Type, len(ridx)))
	}
	for c, col := range right {
		a, err := gather(j.outMem, col, ridx)
		if err != nil {
			return fmt.Errorf("join: right column %q: %w", j.build.schema.Field(c).Name, err)
		}
		cols = append(cols, a)
	}
	j.emitsColumnar++
	return emitRecord(ctx, out, array.NewRecordBatch(j.out, cols, int64(len(ridx))))
}
