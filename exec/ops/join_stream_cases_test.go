package ops

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// A changelog input's batch [+I a, -U a, +U a'] (an updating aggregate's
// output): the -U retracts the only live row of the batch's chunk; the
// chunk must stay while the batch is being added to it, or +U a' would land
// in a dropped chunk (invisible to probes; a panic for an outer side).
func TestStreamJoinRetractionEmptiesTheBatchChunk(t *testing.T) {
	for _, typ := range []JoinType{Inner, Left} {
		t.Run(fmt.Sprint(typ), func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			leftSchema := changelogSchema(arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64, Nullable: true}, {Name: "n", Type: i64}}, nil))
			out := changelogSchema(arrow.NewSchema(append(leftSchema.Fields()[1:], buildSchema.Fields()...), nil))
			j := NewStreamJoin(StreamJoinSpec{Type: typ, LeftKeys: []int{1}, RightKeys: []int{0}, LeftOp: 0, RightOp: -1, Out: out}, mem)
			defer j.Close()
			c := &capture{}
			lb := exec.NewRowBatch(leftSchema, []exec.Row{
				{OpInsert, int64(1), int64(1)},
				{OpUpdateBefore, int64(1), int64(1)},
				{OpUpdateAfter, int64(1), int64(2)},
			})
			if err := j.Process(ctx, 0, lb, c); err != nil {
				t.Fatal(err)
			}
			lb.Release()
			rb := exec.NewRowBatch(buildSchema, []exec.Row{{int64(1), "x", 1.0}})
			if err := j.Process(ctx, 1, rb, c); err != nil {
				t.Fatal(err)
			}
			rb.Release()
			rows, _ := c.rows()
			got := applyChangelog(t, rows)
			want := []exec.Row{{int64(1), int64(2), int64(1), "x", 1.0}}
			if !rowsEqual(sortedRows(got), want) {
				t.Errorf("applied output %v, want %v (changes %v)", got, want, rows)
			}
			if l, _ := j.StateRows(); l != 1 {
				t.Errorf("left state rows %d, want 1", l)
			}
		})
	}
}

// A FULL hash join whose build input ended first must hold the probe's
// watermarks until its unmatched build rows are out (at the probe's end):
// rows after the final watermark are late for any window after the join.
func TestHashJoinFullHoldsTheFinalWatermark(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	j := NewHashJoin(Full, []int{0}, []int{0}, joinSchema(), mem)
	defer j.Close()
	var log []string
	c := &orderCapture{log: &log}
	rb := exec.NewRowBatch(buildSchema, []exec.Row{{int64(1), "x", 1.0}, {int64(99), "unmatched", 2.0}})
	if _, err := exec.Dispatch(ctx, j, false, 1, rb, c); err != nil {
		t.Fatal(err)
	}
	rb.Release()
	if err := j.Finish(ctx, 1, c); err != nil { // build ends first
		t.Fatal(err)
	}
	pb := exec.NewRowBatch(SampleSchema, sampleRows(3, false))
	if _, err := exec.Dispatch(ctx, j, false, 0, pb, c); err != nil {
		t.Fatal(err)
	}
	pb.Release()
	if err := j.OnWatermark(ctx, exec.MaxWatermark, c); err != nil { // the probe's final watermark
		t.Fatal(err)
	}
	if err := j.Finish(ctx, 0, c); err != nil {
		t.Fatal(err)
	}
	seenMax := false
	rows := 0
	for _, e := range log {
		if e == "WM(max)" {
			seenMax = true
		} else if seenMax {
			t.Errorf("%s emitted after the final watermark (order %v)", e, log)
		} else {
			rows++
		}
	}
	if !seenMax || rows != 2 {
		t.Errorf("output %v: want the matched batch, the unmatched build row's batch, then WM(max)", log)
	}
}

type orderCapture struct{ log *[]string }

func (c *orderCapture) Emit(_ context.Context, b *exec.Batch) error {
	*c.log = append(*c.log, fmt.Sprintf("batch(%d rows)", b.Len()))
	return nil
}

func (c *orderCapture) EmitWatermark(_ context.Context, wm int64) error {
	s := fmt.Sprint(wm)
	if wm == exec.MaxWatermark {
		s = "max"
	}
	*c.log = append(*c.log, "WM("+s+")")
	return nil
}

// TestStreamJoinOddInputs: NULL keys, NULL and all-NULL ROW columns, one-row
// batches, INNER/LEFT/FULL with born-columnar output allowed: no panic, no
// leak, and the inner pairs are the nested-loop ones.
func TestStreamJoinOddInputs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	stT := arrow.StructOf(arrow.Field{Name: "a", Type: i64, Nullable: true}, arrow.Field{Name: "b", Type: str, Nullable: true})
	ls := arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64, Nullable: true}, {Name: "s", Type: stT, Nullable: true}}, nil)
	out := arrow.NewSchema(append(append([]arrow.Field{}, ls.Fields()...), ls.Fields()...), nil)
	for _, typ := range []JoinType{Inner, Left, Full} {
		o := out
		if typ != Inner {
			o = changelogSchema(out)
		}
		j := NewStreamJoin(StreamJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1, Out: o}, mem)
		j.SetColumnarOutput(true)
		c := &capture{}
		feed := func(s int, rows []exec.Row) {
			bs := makeBatches(t, mem, input{ls, rows}, max(len(rows), 1), true)
			for _, b := range bs {
				if _, err := exec.Dispatch(ctx, j, true, s, b, c); err != nil {
					t.Fatal(err)
				}
				b.Release()
			}
		}
		feed(0, []exec.Row{{nil, nil}, {nil, exec.Row{int64(1), "x"}}})
		feed(1, []exec.Row{{nil, nil}})
		for i := 0; i < 70; i++ {
			feed(i%2, []exec.Row{{int64(i % 3), exec.Row{int64(i), fmt.Sprint(i)}}, {int64(i % 3), nil}})
		}
		if err := j.Finish(ctx, 0, c); err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(ctx, 1, c); err != nil {
			t.Fatal(err)
		}
		rows, _ := c.rows()
		if typ == Inner && len(rows) == 0 {
			t.Errorf("INNER: no pairs")
		}
		j.Close()
	}
}

// TestStreamJoinRetractsNaN: a retraction finds its row when a value is
// NaN (which is not equal to itself).
func TestStreamJoinRetractsNaN(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	f64t := arrow.PrimitiveTypes.Float64
	leftSchema := changelogSchema(arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64, Nullable: true}, {Name: "x", Type: f64t}}, nil))
	out := changelogSchema(arrow.NewSchema(append(leftSchema.Fields()[1:], buildSchema.Fields()...), nil))
	j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{1}, RightKeys: []int{0}, LeftOp: 0, RightOp: -1, Out: out}, mem)
	defer j.Close()
	c := &capture{}
	rb := exec.NewRowBatch(buildSchema, []exec.Row{{int64(1), "x", 1.0}})
	if err := j.Process(ctx, 1, rb, c); err != nil {
		t.Fatal(err)
	}
	rb.Release()
	nan := math.NaN()
	for _, ch := range [][]exec.Row{{{OpInsert, int64(1), nan}}, {{OpUpdateBefore, int64(1), nan}, {OpUpdateAfter, int64(1), 2.0}}} {
		b := exec.NewRowBatch(leftSchema, ch)
		if err := j.Process(ctx, 0, b, c); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	rows, _ := c.rows()
	if l, _ := j.StateRows(); l != 1 || j.badRetracts != 0 {
		t.Errorf("left state %d rows (want 1), bad retractions %d; changes %v", l, j.badRetracts, rows)
	}
}
