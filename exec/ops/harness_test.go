package ops

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// ---- test-only expressions (package expr is written in parallel) ----

// tCol is a column reference.
type tCol struct {
	col int
	typ arrow.DataType
}

func (c tCol) Type() arrow.DataType            { return c.typ }
func (c tCol) String() string                  { return fmt.Sprintf("$%d", c.col) }
func (c tCol) EvalRow(r exec.Row) (any, error) { return r[c.col], nil }
func (c tCol) EvalColumnar(_ memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	a := rec.Column(c.col)
	a.Retain()
	return a, nil
}

// tGt is "$col > k" over a BIGINT column (NULL in, NULL out).
type tGt struct {
	col int
	k   int64
}

func (g tGt) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (g tGt) String() string       { return fmt.Sprintf("$%d > %d", g.col, g.k) }
func (g tGt) EvalRow(r exec.Row) (any, error) {
	if r[g.col] == nil {
		return nil, nil
	}
	return r[g.col].(int64) > g.k, nil
}
func (g tGt) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	col, ok := rec.Column(g.col).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("$%d is %s", g.col, rec.Column(g.col).DataType())
	}
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(col.Len())
	vals := col.Int64Values()
	for i, v := range vals {
		if col.IsNull(i) {
			b.UnsafeAppendBoolToBitmap(false)
		} else {
			b.UnsafeAppend(v > g.k)
		}
	}
	return b.NewArray(), nil
}

// tNeg is "-$col" over BIGINT: a computed (not pass-through) column.
type tNeg struct{ col int }

func (n tNeg) Type() arrow.DataType { return arrow.PrimitiveTypes.Int64 }
func (n tNeg) String() string       { return fmt.Sprintf("-$%d", n.col) }
func (n tNeg) EvalRow(r exec.Row) (any, error) {
	if r[n.col] == nil {
		return nil, nil
	}
	return -r[n.col].(int64), nil
}
func (n tNeg) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	col := rec.Column(n.col).(*array.Int64)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(-col.Value(i))
		}
	}
	return b.NewArray(), nil
}

var _ expr.Expr = tCol{}

// ---- the operator harness ----

// capture is an Emitter that keeps what it is given.
type capture struct {
	batches []*exec.Batch
	wms     []int64
}

func (c *capture) Emit(_ context.Context, b *exec.Batch) error {
	b.Retain()
	c.batches = append(c.batches, b)
	return nil
}

func (c *capture) EmitWatermark(_ context.Context, wm int64) error {
	c.wms = append(c.wms, wm)
	return nil
}

// rows decodes what was captured without counting it (the counters are
// checked before) and releases the batches.
func (c *capture) rows() (out []exec.Row, columnar int) {
	for _, b := range c.batches {
		if b.IsColumnar() {
			columnar++
			out = append(out, exec.DecodeRows(b.Record())...)
		} else {
			out = append(out, b.Rows()...)
		}
		b.Release()
	}
	c.batches = nil
	return out, columnar
}

// input is one operator input: its schema and rows.
type input struct {
	schema *arrow.Schema
	rows   []exec.Row
}

// makeBatches cuts rows into batches of size, columnar or rows.
func makeBatches(t testing.TB, mem memory.Allocator, in input, size int, columnar bool) []*exec.Batch {
	t.Helper()
	var out []*exec.Batch
	for start := 0; start < len(in.rows); start += size {
		end := min(start+size, len(in.rows))
		if !columnar {
			out = append(out, exec.NewRowBatch(in.schema, in.rows[start:end:end]))
			continue
		}
		rec, err := exec.EncodeRows(mem, in.schema, in.rows[start:end])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, exec.NewColumnarBatch(rec))
	}
	return out
}

// runResult is one run of an operator.
type runResult struct {
	rows       []exec.Row
	stopped    bool // an input call returned exec.ErrStop
	columnarIn int  // batches the columnar hook took
	outCol     int  // output batches that were columnar
	outBatches int
}

// runOp feeds the inputs round robin, batch by batch, through exec.Dispatch
// (finishing each input when it runs out) and checks the materialisation
// counters: with the columnar switch on and columnar input, no input batch
// may be decoded.
func runOp(t *testing.T, mem memory.Allocator, op exec.Operator, ins []input, size int, colIn, colOn bool) runResult {
	t.Helper()
	ctx := context.Background()
	if s, ok := op.(exec.ColumnarOutputSetter); ok {
		s.SetColumnarOutput(colOn)
	}
	defer op.Close()
	feeds := make([][]*exec.Batch, len(ins))
	var all []*exec.Batch
	for i, in := range ins {
		feeds[i] = makeBatches(t, mem, in, size, colIn)
		all = append(all, feeds[i]...)
	}
	defer func() {
		for _, b := range all {
			b.Release()
		}
	}()
	out := &capture{}
	var res runResult
	before := exec.Global.BatchesMaterialized.Load()
	finished := make([]bool, len(ins))
	pos := make([]int, len(ins))
feed:
	for left := len(ins); left > 0; {
		for i := range ins {
			if finished[i] {
				continue
			}
			if pos[i] == len(feeds[i]) {
				finished[i] = true
				left--
				if err := op.Finish(ctx, i, out); err != nil {
					if errors.Is(err, exec.ErrStop) {
						res.stopped = true
						break feed
					}
					t.Fatalf("finish input %d: %v", i, err)
				}
				continue
			}
			b := feeds[i][pos[i]]
			pos[i]++
			took, err := exec.Dispatch(ctx, op, colOn, i, b, out)
			if took {
				res.columnarIn++
			}
			if !colOn && took {
				t.Fatalf("columnar path taken with columnar off")
			}
			if errors.Is(err, exec.ErrStop) {
				res.stopped = true
				break feed
			}
			if err != nil {
				t.Fatalf("input %d: %v", i, err)
			}
		}
	}
	if colIn && colOn && op.Capabilities().IngestsColumnar {
		if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
			t.Errorf("%s: %d batches materialised on a columnar run", op.Kind(), d)
		}
		for _, b := range all {
			if b.Materialized() {
				t.Errorf("%s: an input batch was materialised on a columnar run", op.Kind())
				break
			}
		}
		if res.columnarIn != countBatchesFed(pos) {
			t.Errorf("%s: columnar hook took %d of %d batches", op.Kind(), res.columnarIn, countBatchesFed(pos))
		}
	}
	res.outBatches = len(out.batches)
	res.rows, res.outCol = out.rows()
	return res
}

func countBatchesFed(pos []int) int {
	n := 0
	for _, p := range pos {
		n += p
	}
	return n
}

// opCase is one operator test case, run across every variant.
type opCase struct {
	name    string
	newOp   func(mem memory.Allocator) exec.Operator
	inputs  func(nulls bool) []input
	want    func(ins []input) []exec.Row // independent reference answer
	ordered bool                         // the operator defines the output order
	stops   bool                         // expect exec.ErrStop
}

// runCase reruns c with batch sizes 1, 3 and 1024, columnar and row input,
// with and without NULLs, with the columnar switch on and off, and checks
// every run against the reference answer.
func runCase(t *testing.T, c opCase) {
	for _, nulls := range []bool{false, true} {
		for _, size := range []int{1, 3, 1024} {
			for _, colIn := range []bool{false, true} {
				for _, colOn := range []bool{false, true} {
					name := fmt.Sprintf("%s/nulls=%v/size=%d/colIn=%v/colOn=%v", c.name, nulls, size, colIn, colOn)
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						ins := c.inputs(nulls)
						res := runOp(t, mem, c.newOp(mem), ins, size, colIn, colOn)
						if res.stopped != c.stops {
							t.Errorf("stopped = %v, want %v", res.stopped, c.stops)
						}
						got, want := res.rows, c.want(ins)
						if !c.ordered {
							got, want = sortedRows(got), sortedRows(want)
						}
						if !rowsEqual(got, want) {
							t.Errorf("got %d rows %v\nwant %d rows %v", len(got), trunc(got), len(want), trunc(want))
						}
					})
				}
			}
		}
	}
}

func rowsEqual(a, b []exec.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sortedRows(rows []exec.Row) []exec.Row {
	// Each row printed once, not once per comparison.
	keys := make([]string, len(rows))
	idx := make([]int, len(rows))
	for i, r := range rows {
		keys[i], idx[i] = fmt.Sprint(r), i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	out := make([]exec.Row, len(rows))
	for k, i := range idx {
		out[k] = rows[i]
	}
	return out
}

func trunc(rows []exec.Row) []exec.Row {
	if len(rows) > 12 {
		return rows[:12]
	}
	return rows
}
