package ops

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// releasing decodes each emitted batch at once and keeps no reference, so
// once the producer releases it the next batch's output reuses its blocks.
type releasing struct{ rows []exec.Row }

func (r *releasing) Emit(_ context.Context, b *exec.Batch) error {
	if b.IsColumnar() {
		r.rows = append(r.rows, exec.DecodeRows(b.Record())...)
	} else {
		r.rows = append(r.rows, b.Rows()...)
	}
	return nil
}

func (r *releasing) EmitWatermark(context.Context, int64) error { return nil }

// Project builds its fused columns in recycled, unzeroed memory: with each
// output released before the next batch, and the NULL chunk moving from
// batch to batch, every value and validity word the fused path hands out
// must have been written (a stale word shows as the previous batch's
// NULLs, a poisoned one as 0xFF), including all-NULL chunks and chunks
// with no NULL after one with some. The reference answer is the row path
// (EvalRow), and the test fails unless the fused path ran.
func TestProjectFusedRecycledOutput(t *testing.T) {
	for _, mode := range []string{"poison", "on"} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv("CLINK_OPERATOR_RECYCLE", mode)
			testProjectFusedRecycled(t)
		})
	}
}

func testProjectFusedRecycled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	in := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: dec, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	k := expr.Col(0, in.Field(0).Type, "k")
	d := expr.Col(1, dec, "d")
	b := expr.Col(2, in.Field(2).Type, "b")
	mk := func(e expr.Expr, err error) expr.Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	lit := func(s string) expr.Expr { return mk(expr.NumberLit(s)) }
	nullBig := mk(expr.NewCast(expr.Lit(nil, arrow.Null), arrow.PrimitiveTypes.Int64))
	exprs := []expr.Expr{
		mk(expr.NewBinary("*", d, lit("2.5"))),
		mk(expr.NewBinary("/", k, b)), // b = 0: NULL
		mk(expr.NewBinary("+", k, nullBig)),
		mk(expr.NewBinary(">", d, lit("100.00"))),
		mk(expr.NewCase(nil, []expr.When{{Cond: mk(expr.NewBinary("<>", b, lit("0"))), Then: mk(expr.NewBinary("-", k, b))}}, nil)),
	}
	fields := make([]arrow.Field, len(exprs))
	for i, e := range exprs {
		fields[i] = arrow.Field{Name: e.String(), Type: e.Type(), Nullable: true}
	}
	out := arrow.NewSchema(fields, nil)

	// Batch j (2500 rows, three chunks) is NULL in k and d over its chunk
	// j%3, has scattered NULLs in chunk (j+1)%3 and none in the third.
	const n, batches = 2500, 6
	var rows []exec.Row
	for j := range batches {
		for i := 0; i < n; i++ {
			r := exec.Row{int64(i*7 - 3000), decimal128.FromI64(int64(i*37 - 20000)), int32(i%5 - 2)}
			switch i / 1024 {
			case j % 3:
				r[0], r[1] = nil, nil
			case (j + 1) % 3:
				if i%9 == 0 {
					r[1], r[2] = nil, nil
				}
			}
			rows = append(rows, r)
		}
	}

	p := NewProject(exprs, out, mem)
	defer p.Close()
	got := &releasing{}
	for j := range batches {
		rec, err := exec.EncodeRows(mem, in, rows[j*n:(j+1)*n])
		if err != nil {
			t.Fatal(err)
		}
		bt := exec.NewColumnarBatch(rec)
		took, err := exec.Dispatch(t.Context(), p, true, 0, bt, got)
		bt.Release()
		if err != nil || !took {
			t.Fatalf("took=%v err=%v", took, err)
		}
	}
	for c, f := range p.fused {
		if st := f.Stats(); st.Fused == 0 || st.Fallbacks > 0 {
			t.Errorf("%s: %+v, want every batch fused", exprs[c], st)
		}
	}
	if len(got.rows) != len(rows) {
		t.Fatalf("%d rows out, want %d", len(got.rows), len(rows))
	}
	for i, g := range got.rows {
		for c, e := range exprs {
			want, err := e.EvalRow(rows[i])
			if err != nil {
				t.Fatal(err)
			}
			if !sameCell(g[c], want) {
				t.Fatalf("row %d, %s: got %#v, want %#v", i, e, g[c], want)
			}
		}
	}
}

// sameCell compares two decoded values; a DECIMAL compares as its number.
func sameCell(a, b any) bool {
	x, ok1 := a.(decimal128.Num)
	y, ok2 := b.(decimal128.Num)
	if ok1 && ok2 {
		return x == y
	}
	return a == b
}
