package ops

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// wideInputs: 3000 probe rows against 200 build rows with unique keys
// (a SINGLE join must not fail), some probe keys missing.
func wideInputs() []input {
	left := make([]exec.Row, 3000)
	for i := range left {
		left[i] = exec.Row{int64(i % 250), fmt.Sprintf("s%d", i%7), int64(i % 10)}
	}
	right := make([]exec.Row, 200)
	for i := range right {
		right[i] = exec.Row{int64(i), fmt.Sprintf("s%d", i%5), int64(i % 13)}
	}
	return []input{{refLeftSchema, left}, {refRightSchema, right}}
}

// TestBatchJoinBornColumnar: with columnar input and output on, every
// join type, hashed or nested-loop, with a residual, takes every batch on
// its columnar path (runOp: zero materialisations) and emits only born
// columnar batches, with the reference's answer.
func TestBatchJoinBornColumnar(t *testing.T) {
	ins := wideInputs()
	for _, typ := range allJoinTypes {
		for _, nested := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nested=%v", typ, nested), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				ref := refSpec{typ: typ, cond: refResidual, nRight: refRightSchema.NumFields()}
				var op exec.Operator
				if nested {
					ref.cond = tAnd{tCmp{op: "=", a: 0, b: 3}, refResidual}
					op = NewNestedLoopJoin(NestedLoopJoinSpec{Type: typ, On: ref.cond, Out: refOut(typ)}, mem)
				} else {
					ref.lk, ref.rk, ref.keyed = []int{0}, []int{0}, true
					op = NewHashJoinSpec(HashJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0},
						Residual: refResidual, Out: refOut(typ)}, mem)
				}
				res := runOp(t, mem, op, ins, 1024, true, true)
				if res.outBatches == 0 || res.outCol != res.outBatches {
					t.Errorf("%d of %d output batches born columnar", res.outCol, res.outBatches)
				}
				want, err := refJoinSQL(t, ref, ins[0].rows, ins[1].rows)
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEqual(sortedRows(res.rows), sortedRows(want)) {
					t.Errorf("got %d rows, want %d", len(res.rows), len(want))
				}
			})
		}
	}
}

// rowCounter is an Emitter that counts rows and the largest batch.
type rowCounter struct {
	rows, batches, largest int
	after                  func() // called after each batch
}

func (c *rowCounter) Emit(_ context.Context, b *exec.Batch) error {
	c.rows += b.Len()
	c.batches++
	c.largest = max(c.largest, b.Len())
	if c.after != nil {
		c.after()
	}
	return nil
}

func (c *rowCounter) EmitWatermark(context.Context, int64) error { return nil }

// A cross join's product streams out in chunks: no batch is larger than
// joinPairChunk, and cancelling the context stops it between chunks.
func TestNestedLoopJoinStreams(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := newRand(3)
	left, right := refRows(rng, 2000), refRows(rng, 2000)
	ctx := context.Background()

	j := NewNestedLoopJoin(NestedLoopJoinSpec{Type: Inner, Out: refOut(Inner)}, mem)
	j.SetColumnarOutput(true)
	c := &rowCounter{}
	feedJoin(t, ctx, mem, j, left, right, c)
	j.Close()
	if c.rows != 2000*2000 || c.largest > joinPairChunk || c.batches < 2000*2000/joinPairChunk {
		t.Errorf("%d rows in %d batches, largest %d", c.rows, c.batches, c.largest)
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	j = NewNestedLoopJoin(NestedLoopJoinSpec{Type: Inner, Out: refOut(Inner)}, mem)
	defer j.Close()
	c = &rowCounter{after: cancel}
	err := feedErr(t, cctx, mem, j, left, right, c)
	if !errors.Is(err, context.Canceled) || c.batches != 1 {
		t.Errorf("after cancelling: %v, %d batches", err, c.batches)
	}
}

func feedJoin(t *testing.T, ctx context.Context, mem memory.Allocator, op exec.Operator, left, right []exec.Row, out exec.Emitter) {
	t.Helper()
	if err := feedErr(t, ctx, mem, op, left, right, out); err != nil {
		t.Fatal(err)
	}
}

// feedErr sends the build side whole, then the probe side in batches of
// 1024 rows, columnar.
func feedErr(t *testing.T, ctx context.Context, mem memory.Allocator, op exec.Operator, left, right []exec.Row, out exec.Emitter) error {
	t.Helper()
	return feedAs(t, ctx, mem, op, left, right, true, out)
}

// feedAs is feedErr with the batches columnar (and the columnar path on)
// or rows (and it off).
func feedAs(t *testing.T, ctx context.Context, mem memory.Allocator, op exec.Operator, left, right []exec.Row, columnar bool, out exec.Emitter) error {
	t.Helper()
	for i, in := range []input{{refRightSchema, right}, {refLeftSchema, left}} {
		side := 1 - i
		bs := makeBatches(t, mem, in, 1024, columnar)
		defer release(bs)
		for _, b := range bs {
			if _, err := exec.Dispatch(ctx, op, columnar, side, b, out); err != nil {
				return err
			}
		}
		if err := op.Finish(ctx, side, out); err != nil {
			return err
		}
	}
	return nil
}

// A SINGLE join's error is the scalar subquery's.
func TestSingleJoinError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	j := NewHashJoin(Single, []int{0}, []int{0}, refOut(Single), mem)
	defer j.Close()
	left := []exec.Row{{int64(1), "a", int64(1)}}
	right := []exec.Row{{int64(1), "a", int64(1)}, {int64(1), "b", int64(2)}}
	err := feedErr(t, context.Background(), mem, j, left, right, discard{})
	if err == nil || err.Error() != "more than one row returned by a subquery used as an expression" {
		t.Fatalf("error %v", err)
	}
}

// Validate refuses what no input can make valid.
func TestJoinSpecValidate(t *testing.T) {
	notBool := tNeg{col: 2}
	for name, err := range map[string]error{
		"null-aware inner":       HashJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, NullAware: true, Out: refOut(Inner)}.Validate(),
		"no keys":                HashJoinSpec{Type: Inner, Out: refOut(Inner)}.Validate(),
		"null-safe count":        HashJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, NullSafe: []bool{true, true}, Out: refOut(Inner)}.Validate(),
		"mark not boolean":       HashJoinSpec{Type: Mark, LeftKeys: []int{0}, RightKeys: []int{0}, Out: refOut(Semi)}.Validate(),
		"residual type":          HashJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, Residual: notBool, Out: refOut(Inner)}.Validate(),
		"key range":              HashJoinSpec{Type: Semi, LeftKeys: []int{3}, RightKeys: []int{0}, Out: refOut(Semi)}.Validate(),
		"nested null-aware left": NestedLoopJoinSpec{Type: Left, NullAware: true, Out: refOut(Left)}.Validate(),
		"no output":              NestedLoopJoinSpec{Type: Inner}.Validate(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The residual's record gathers a column only when the condition reads it.
func TestPairRecordLazy(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	l := makeBatches(t, mem, input{refLeftSchema, refRows(newRand(1), 10)}, 10, true)[0]
	defer l.Release()
	r := makeBatches(t, mem, input{refRightSchema, refRows(newRand(2), 10)}, 10, true)[0]
	defer r.Release()
	rec := newPairRecord(mem, mem, refOut(Inner), recordColumns(l.Record()), []int32{0, 3, 9}, recordColumns(r.Record()), []int32{1, 1, 2})
	defer rec.Release()
	m, err := refResidual.EvalColumnar(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	for i, c := range rec.cols {
		if gathered := c != nil; gathered != (i == 2 || i == 5) {
			t.Errorf("column %d gathered: %v", i, gathered)
		}
	}
	// The values are the pairs', through Column and through a whole
	// slice (what a row-at-a-time fallback would read).
	sl := rec.NewSlice(0, 3)
	defer sl.Release()
	for k, p := range [][2]int{{0, 1}, {3, 1}, {9, 2}} {
		for c, src := range map[int]exec.Row{2: {l.Record().Column(2), p[0]}, 3: {r.Record().Column(0), p[1]}} {
			want := exec.Value(src[0].(arrow.Array), src[1].(int))
			if got := exec.Value(rec.Column(c), k); got != want {
				t.Errorf("pair %d column %d: %v, want %v", k, c, got, want)
			}
			if got := exec.Value(sl.Column(c), k); got != want {
				t.Errorf("slice: pair %d column %d: %v, want %v", k, c, got, want)
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 5)) }

// Batches of both forms on both inputs (a row chunk among columnar ones is
// encoded into the build side; a row probe batch takes the row path): the
// answer is the reference's all the same.
func TestBatchJoinMixedForms(t *testing.T) {
	rng := newRand(9)
	left, right := refRows(rng, 200), refRows(rng, 60)
	for _, typ := range allJoinTypes {
		for _, nested := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nested=%v", typ, nested), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				aware := nullAwareValid(typ)
				ref := refSpec{typ: typ, cond: refResidual, nullAware: aware, nRight: refRightSchema.NumFields()}
				var op exec.Operator
				if nested {
					ref.cond = tAnd{tCmp{op: "=", a: 0, b: 3}, refResidual}
					op = NewNestedLoopJoin(NestedLoopJoinSpec{Type: typ, On: ref.cond, NullAware: aware, Out: refOut(typ)}, mem)
				} else {
					ref.lk, ref.rk, ref.nullSafe, ref.keyed = []int{0, 1}, []int{0, 1}, []bool{false, true}, true
					op = NewHashJoinSpec(HashJoinSpec{Type: typ, LeftKeys: ref.lk, RightKeys: ref.rk, NullSafe: ref.nullSafe,
						NullAware: aware, Residual: refResidual, Out: refOut(typ)}, mem)
				}
				want, err := refJoinSQL(t, ref, left, right)
				if typ == Single {
					// Duplicate keys: the reference and the join both fail.
					if !errors.Is(err, ErrScalarSubqueryRows) {
						t.Fatalf("reference: %v", err)
					}
					if err := feedMixed(t, mem, op, left, right, &capture{}); !errors.Is(err, ErrScalarSubqueryRows) {
						t.Errorf("error %v", err)
					}
					op.Close()
					return
				}
				out := &capture{}
				if err := feedMixed(t, mem, op, left, right, out); err != nil {
					t.Fatal(err)
				}
				op.Close()
				got, _ := out.rows()
				if !rowsEqual(sortedRows(got), sortedRows(want)) {
					t.Errorf("got %d rows, want %d", len(got), len(want))
				}
			})
		}
	}
}

// feedMixed sends each input in batches of 16 rows, alternately columnar
// and rows, the build side first, with columnar output on.
func feedMixed(t *testing.T, mem memory.Allocator, op exec.Operator, left, right []exec.Row, out exec.Emitter) error {
	t.Helper()
	ctx := context.Background()
	op.(exec.ColumnarOutputSetter).SetColumnarOutput(true)
	for i, in := range []input{{refRightSchema, right}, {refLeftSchema, left}} {
		side := 1 - i
		cols := makeBatches(t, mem, in, 16, true)
		defer release(cols)
		rows := makeBatches(t, mem, in, 16, false)
		defer release(rows)
		for k := range cols {
			b := cols[k]
			if k%2 == 1 {
				b = rows[k]
			}
			if _, err := exec.Dispatch(ctx, op, true, side, b, out); err != nil {
				return err
			}
		}
		if err := op.Finish(ctx, side, out); err != nil {
			return err
		}
	}
	return nil
}

// A RIGHT join holds the watermark until its unmatched build rows are
// out (they may be of any time); a SEMI join forwards it once the build
// side is hashed.
func TestBatchJoinWatermarks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	left := []exec.Row{{int64(1), "a", int64(0)}}
	right := []exec.Row{{int64(1), "a", int64(0)}, {int64(2), "b", int64(0)}}
	for _, typ := range []JoinType{Right, Semi} {
		j := NewHashJoinSpec(HashJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, Out: refOut(typ)}, mem)
		out := &capture{}
		if err := j.OnWatermark(ctx, 5, out); err != nil || len(out.wms) != 0 {
			t.Fatalf("%s: watermark before the build: %v %v", typ, out.wms, err)
		}
		rb := makeBatches(t, mem, input{refRightSchema, right}, 10, true)
		lb := makeBatches(t, mem, input{refLeftSchema, left}, 10, true)
		for _, step := range []func() error{
			func() error { _, err := exec.Dispatch(ctx, j, true, 1, rb[0], out); return err },
			func() error { return j.Finish(ctx, 1, out) },
			func() error { _, err := exec.Dispatch(ctx, j, true, 0, lb[0], out); return err },
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.OnWatermark(ctx, 7, out); err != nil {
			t.Fatal(err)
		}
		wantWMs := []int64{5, 7} // SEMI: the held one at the build's end, then this
		if typ == Right {
			wantWMs = nil // held for the unmatched rows
		}
		if fmt.Sprint(out.wms) != fmt.Sprint(wantWMs) {
			t.Errorf("%s: watermarks %v before the probe ends, want %v", typ, out.wms, wantWMs)
		}
		before := len(out.batches)
		if err := j.Finish(ctx, 0, out); err != nil {
			t.Fatal(err)
		}
		if typ == Right {
			if len(out.batches) != before+1 || fmt.Sprint(out.wms) != "[7]" {
				t.Errorf("RIGHT: at the probe's end %d batches, watermarks %v; want the unmatched row then [7]", len(out.batches)-before, out.wms)
			}
		}
		out.rows()
		release(rb)
		release(lb)
		j.Close()
	}
}
