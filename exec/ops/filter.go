package ops

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/recycle"
)

// Filter keeps the rows for which its predicate is TRUE (NULL drops the
// row, as in SQL WHERE).
type Filter struct {
	exec.Base
	pred  expr.Expr
	fused *expr.Fused // the columnar path's evaluator of pred
	mem   memory.Allocator
	sel   []int32 // selection vector, reused across batches
	// out is where the kept rows are gathered (see outputAllocator).
	out     memory.Allocator
	recycle *recycle.Allocator
}

// NewFilter returns a filter on pred, which must be BOOLEAN.
func NewFilter(pred expr.Expr, mem memory.Allocator) *Filter {
	f := &Filter{pred: pred, mem: mem, fused: expr.NewFused(pred, mem)}
	f.out, f.recycle = outputAllocator(mem)
	return f
}

// Close hands the recycled output blocks and the evaluator's scratch back.
func (f *Filter) Close() {
	if f.recycle != nil {
		f.recycle.Close()
	}
	f.fused.Release()
}

// Kind implements exec.Operator.
func (f *Filter) Kind() string { return "filter" }

// Capabilities implements exec.Operator.
func (f *Filter) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Predicate is the filter's condition, for EXPLAIN.
func (f *Filter) Predicate() expr.Expr { return f.pred }

// Process is the row path: the predicate row by row.
func (f *Filter) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	rows := b.Rows()
	kept := make([]exec.Row, 0, len(rows))
	for i, r := range rows {
		v, err := f.pred.EvalRow(r)
		if err != nil {
			return fmt.Errorf("filter %s: row %d: %w", f.pred, i, err)
		}
		switch x := v.(type) {
		case nil:
		case bool:
			if x {
				kept = append(kept, r)
			}
		default:
			return fmt.Errorf("filter %s: row %d: predicate gave %T, not BOOLEAN", f.pred, i, v)
		}
	}
	if len(kept) == len(rows) && len(rows) > 0 {
		return out.Emit(ctx, b)
	}
	return emitRows(ctx, out, b.Schema(), kept)
}

// ProcessColumnar evaluates the predicate over the whole record into a
// selection vector (fused: no array per node, no boolean mask) and gathers
// the kept rows. A batch kept whole is forwarded as is and a contiguous
// run is a zero-copy slice.
func (f *Filter) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	rec := b.Record()
	sel, err := f.fused.Select(f.mem, rec, f.sel[:0])
	if err != nil {
		return false, fmt.Errorf("filter %s: %w", f.pred, err)
	}
	f.sel = sel
	n := int(rec.NumRows())
	switch {
	case len(sel) == 0:
		return true, nil
	case len(sel) == n:
		return true, out.Emit(ctx, b)
	case int(sel[len(sel)-1]-sel[0])+1 == len(sel):
		return true, emitRecord(ctx, out, rec.NewSlice(int64(sel[0]), int64(sel[len(sel)-1])+1))
	}
	res, err := gatherRecord(f.out, rec.Schema(), recordColumns(rec), sel)
	if err != nil {
		return false, fmt.Errorf("filter %s: %w", f.pred, err)
	}
	return true, emitRecord(ctx, out, res)
}

// selectTrue appends the positions where mask is valid and true, a 64-bit
// word of the bitmaps at a time (set bits found with TrailingZeros).
func selectTrue(mask *array.Boolean, sel []int32) []int32 {
	n := mask.Len()
	if n == 0 {
		return sel
	}
	off := mask.Data().Offset()
	vals := mask.Data().Buffers()[1].Bytes()
	var valid []byte
	if mask.NullN() > 0 {
		valid = mask.NullBitmapBytes()
	}
	for w := 0; w < n; w += 64 {
		k := min(64, n-w)
		word := bitsAt(vals, off+w, k)
		if valid != nil {
			word &= bitsAt(valid, off+w, k)
		}
		if word == ^uint64(0) {
			for i := 0; i < 64; i++ {
				sel = append(sel, int32(w+i))
			}
			continue
		}
		for word != 0 {
			sel = append(sel, int32(w+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return sel
}

// bitsAt reads k <= 64 bits of an LSB-first bitmap starting at bit pos
// into the low bits of a word (the rest zero).
func bitsAt(bm []byte, pos, k int) uint64 {
	var w uint64
	if pos&7 == 0 && pos/8+8 <= len(bm) {
		w = binary.LittleEndian.Uint64(bm[pos/8:])
	} else {
		for i := 0; i < k; i++ {
			if bm[(pos+i)>>3]&(1<<uint((pos+i)&7)) != 0 {
				w |= 1 << uint(i)
			}
		}
	}
	if k < 64 {
		w &= 1<<uint(k) - 1
	}
	return w
}
