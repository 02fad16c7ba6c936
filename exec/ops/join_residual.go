package ops

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// evalResidual evaluates the join's residual over the candidate pairs
// (lidx[k], ridx[k]) and returns the positions k where it is TRUE and,
// when nulls is set, those where it is NULL. The columnar path evaluates
// it over a record of the pairs, the row path pair by pair.
func (j *batchJoin) evalResidual(pb *probeBatch, lidx, ridx []int32, nulls bool) (sel, nsel []int32, err error) {
	sel, nsel = j.sel[:0], j.nulls[:0]
	defer func() { j.sel, j.nulls = sel, nsel }()
	if len(lidx) == 0 {
		return sel, nsel, nil
	}
	if pb.rec == nil {
		build := j.build.rowForm()
		for k, l := range lidx {
			row := append(append(j.pairRow[:0], pb.rows[l]...), build[ridx[k]]...)
			j.pairRow = row
			v, err := j.residual.EvalRow(row)
			if err != nil {
				return nil, nil, fmt.Errorf("join condition %s: %w", j.residual, err)
			}
			switch x := v.(type) {
			case bool:
				if x {
					sel = append(sel, int32(k))
				}
			case nil:
				if nulls {
					nsel = append(nsel, int32(k))
				}
			default:
				return nil, nil, fmt.Errorf("join condition %s gave %T, not BOOLEAN", j.residual, v)
			}
		}
		return sel, nsel, nil
	}
	right, err := j.build.columns()
	if err != nil {
		return nil, nil, err
	}
	rec := newPairRecord(j.outMem, j.mem, j.pairSchema, recordColumns(pb.rec), lidx, right, ridx)
	defer rec.Release()
	if !nulls {
		// Only the TRUE pairs matter: the fused selection, no mask.
		sel, err = j.fused.Select(j.mem, rec, sel)
		if err == nil {
			err = rec.err
		}
		if err != nil {
			return nil, nil, fmt.Errorf("join condition %s: %w", j.residual, err)
		}
		return sel, nsel, nil
	}
	m, err := j.fused.Eval(j.mem, rec)
	if err == nil {
		err = rec.err
	}
	if err != nil {
		if m != nil {
			m.Release()
		}
		return nil, nil, fmt.Errorf("join condition %s: %w", j.residual, err)
	}
	defer m.Release()
	mask, ok := m.(*array.Boolean)
	if !ok || mask.Len() != len(lidx) {
		return nil, nil, fmt.Errorf("join condition %s gave %d %s values for %d pairs, not BOOLEAN", j.residual, m.Len(), m.DataType(), len(lidx))
	}
	sel = selectTrue(mask, sel)
	if nulls && mask.NullN() > 0 {
		for k := 0; k < mask.Len(); k++ {
			if mask.IsNull(k) {
				nsel = append(nsel, int32(k))
			}
		}
	}
	return sel, nsel, nil
}

// pairRecord is the record a residual is evaluated over: the left and
// right columns of candidate pairs, each gathered only when the expression
// first reads it (Column). A condition reads a column or two of what may be
// wide rows on both sides; gathering them all for every candidate would
// cost more than the condition.
//
// A gather that fails is recorded in err (read after the evaluation) and
// answered with a NULL column: Column cannot return an error.
type pairRecord struct {
	schema      *arrow.Schema
	mem         memory.Allocator // gathers write every byte
	zmem        memory.Allocator // zeroed: NULL columns
	left, right []arrow.Array
	lidx, ridx  []int32
	cols        []arrow.Array
	err         error
	refs        atomic.Int64
}

func newPairRecord(mem, zmem memory.Allocator, schema *arrow.Schema, left []arrow.Array, lidx []int32, right []arrow.Array, ridx []int32) *pairRecord {
	r := &pairRecord{schema: schema, mem: mem, zmem: zmem, left: left, right: right, lidx: lidx, ridx: ridx,
		cols: make([]arrow.Array, schema.NumFields())}
	r.refs.Store(1)
	return r
}

func (r *pairRecord) Schema() *arrow.Schema { return r.schema }
func (r *pairRecord) NumRows() int64        { return int64(len(r.lidx)) }
func (r *pairRecord) NumCols() int64        { return int64(len(r.cols)) }

func (r *pairRecord) ColumnName(i int) string { return r.schema.Field(i).Name }

func (r *pairRecord) Column(i int) arrow.Array {
	if r.cols[i] != nil {
		return r.cols[i]
	}
	var a arrow.Array
	var err error
	if i < len(r.left) {
		a, err = gather(r.mem, r.left[i], r.lidx)
	} else {
		a, err = gather(r.mem, r.right[i-len(r.left)], r.ridx)
	}
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("column %q: %w", r.schema.Field(i).Name, err)
		}
		a = array.MakeArrayOfNull(r.zmem, r.schema.Field(i).Type, len(r.lidx))
	}
	r.cols[i] = a
	return a
}

func (r *pairRecord) Columns() []arrow.Array {
	for i := range r.cols {
		r.Column(i)
	}
	return r.cols
}

// whole is the pairs as a plain record, every column gathered.
func (r *pairRecord) whole() arrow.RecordBatch {
	return array.NewRecordBatch(r.schema, r.Columns(), r.NumRows())
}

func (r *pairRecord) SetColumn(i int, col arrow.Array) (arrow.RecordBatch, error) {
	rec := r.whole()
	defer rec.Release()
	return rec.SetColumn(i, col)
}

func (r *pairRecord) NewSlice(i, j int64) arrow.RecordBatch {
	rec := r.whole()
	defer rec.Release()
	return rec.NewSlice(i, j)
}

func (r *pairRecord) MarshalJSON() ([]byte, error) {
	rec := r.whole()
	defer rec.Release()
	return json.Marshal(rec)
}

func (r *pairRecord) Retain() { r.refs.Add(1) }

func (r *pairRecord) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	for i, c := range r.cols {
		if c != nil {
			c.Release()
			r.cols[i] = nil
		}
	}
}

var _ arrow.RecordBatch = (*pairRecord)(nil)
