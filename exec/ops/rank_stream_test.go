package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

func rankOut(rowNumber bool) *arrow.Schema {
	fs := append([]arrow.Field{}, SampleSchema.Fields()...)
	if rowNumber {
		fs = append(fs, arrow.Field{Name: "rn", Type: arrow.PrimitiveTypes.Int64})
	}
	return arrow.NewSchema(append(fs, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)
}

// kindFirst moves each changelog row's kind (last) to the front, as
// applyChangelog reads it.
func kindFirst(rows []exec.Row) []exec.Row {
	out := make([]exec.Row, len(rows))
	for i, r := range rows {
		out[i] = append(exec.Row{r[len(r)-1]}, r[:len(r)-1]...)
	}
	return out
}

// topPerKey is the reference: per key k, the rows ordered by v DESC
// (NULLs last; ties by arrival, or the later first when lastWins), the
// first n, each with its rank when rowNumber.
func topPerKey(rows []exec.Row, n int, rowNumber, lastWins bool) []exec.Row {
	byKey := map[string][]exec.Row{}
	var order []string
	for _, r := range rows {
		k := fmt.Sprint(r[0])
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	val := func(r exec.Row) (int64, bool) { v, ok := r[2].(int64); return v, ok }
	var want []exec.Row
	for _, k := range order {
		rs := byKey[k]
		if lastWins {
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
		}
		sort.SliceStable(rs, func(i, j int) bool {
			a, aok := val(rs[i])
			b, bok := val(rs[j])
			if aok != bok {
				return aok // NULLs last
			}
			return aok && a > b
		})
		for i := 0; i < n && i < len(rs); i++ {
			r := append(exec.Row{}, rs[i]...)
			if rowNumber {
				r = append(r, int64(i+1))
			}
			want = append(want, r)
		}
	}
	return want
}

// The Top-N per key under the operator harness (batch sizes, NULLs,
// columnar and row input): the applied changelog is each key's top rows.
func TestStreamRankAppliesToTopPerKey(t *testing.T) {
	for _, tc := range []struct {
		n                   int
		rowNumber, lastWins bool
	}{{3, true, false}, {3, false, false}, {1, false, false}, {1, false, true}, {2, true, true}} {
		for _, nulls := range []bool{false, true} {
			for _, size := range []int{1, 3, 1024} {
				for _, colIn := range []bool{false, true} {
					name := fmt.Sprintf("n=%d/rn=%v/last=%v/nulls=%v/size=%d/colIn=%v", tc.n, tc.rowNumber, tc.lastWins, nulls, size, colIn)
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						rows := sampleRows(200, nulls)
						op := NewStreamRank(StreamRankSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 2, Desc: true}},
							N: int64(tc.n), RowNumber: tc.rowNumber, LastWins: tc.lastWins}, rankOut(tc.rowNumber))
						res := runOp(t, mem, op, []input{{SampleSchema, rows}}, size, colIn, true)
						got := sortedRows(applyChangelog(t, kindFirst(res.rows)))
						want := sortedRows(topPerKey(rows, tc.n, tc.rowNumber, tc.lastWins))
						if !rowsEqual(got, want) {
							t.Fatalf("applied:\n%v\nwant:\n%v", got, want)
						}
						if res.outCol != 0 {
							t.Errorf("%d columnar output batches from a changelog operator", res.outCol)
						}
					})
				}
			}
		}
	}
}

// Replacing a key's best row is an update: -U of the old, +U of the new.
func TestStreamRankDedupLastIsAnUpdate(t *testing.T) {
	ctx := context.Background()
	op := NewStreamRank(StreamRankSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 4, Desc: true}}, N: 1, LastWins: true}, rankOut(false))
	defer op.Close()
	ts := func(ms int64) arrow.Timestamp { return arrow.Timestamp(ms) }
	out := &capture{}
	for _, rows := range [][]exec.Row{
		{{int64(1), "a", int64(1), 0.0, ts(10)}},
		{{int64(1), "b", int64(2), 0.0, ts(10)}}, // a tie: the later wins
		{{int64(1), "c", int64(3), 0.0, ts(5)}},  // older: no change
	} {
		if err := op.Process(ctx, 0, exec.NewRowBatch(SampleSchema, rows), out); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := out.rows()
	want := []exec.Row{
		{int64(1), "a", int64(1), 0.0, ts(10), OpInsert},
		{int64(1), "a", int64(1), 0.0, ts(10), OpUpdateBefore},
		{int64(1), "b", int64(2), 0.0, ts(10), OpUpdateAfter},
	}
	if !rowsEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// snapshotCut runs the input through a fresh operator in batches of 3,
// and again with a snapshot after a random batch restored into another
// fresh operator that takes the rest: both give the same output.
func snapshotCut(t *testing.T, mem memory.Allocator, newOp func() exec.Operator, rows []exec.Row, wmEvery int, seed uint64) {
	t.Helper()
	snapshotCutInput(t, mem, newOp, input{SampleSchema, rows}, wmEvery, seed)
}

// snapshotCutInput is snapshotCut over any input.
func snapshotCutInput(t *testing.T, mem memory.Allocator, newOp func() exec.Operator, in input, wmEvery int, seed uint64) {
	t.Helper()
	ctx := context.Background()
	batches := makeBatches(t, mem, in, 3, false)
	run := func(op exec.Operator, from, to int, out *capture) {
		for i := from; i < to; i++ {
			if err := op.Process(ctx, 0, batches[i], out); err != nil {
				t.Fatal(err)
			}
			if wmEvery > 0 && i%wmEvery == wmEvery-1 {
				// The watermark trails the batch's first row's place in
				// sampleRows' clock (300 ms a row) by 2 s.
				wm := (1436918400000+int64(i*3)*300)*1000 - 2_000_000
				if err := op.OnWatermark(ctx, wm, out); err != nil {
					t.Fatal(err)
				}
			}
		}
		if to == len(batches) {
			if err := op.Finish(ctx, 0, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	whole := &capture{}
	a := newOp()
	run(a, 0, len(batches), whole)
	a.Close()
	want, _ := whole.rows()

	cut := rand.New(rand.NewPCG(seed, 1)).IntN(len(batches) + 1)
	got := &capture{}
	b := newOp()
	run(b, 0, cut, got)
	c := newOp()
	if err := state.RoundTrip(ctx, mem, b.(exec.Snapshotter), c.(exec.Snapshotter)); err != nil {
		t.Fatal(err)
	}
	b.Close()
	run(c, cut, len(batches), got)
	c.Close()
	rows2, _ := got.rows()
	if !rowsEqual(rows2, want) {
		t.Fatalf("cut after batch %d: %d rows %v\nwant %d rows %v", cut, len(rows2), trunc(rows2), len(want), trunc(want))
	}
}

func TestStreamRankSnapshotRoundTrip(t *testing.T) {
	for seed := range uint64(8) {
		for _, rn := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed=%d/rn=%v", seed, rn), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				newOp := func() exec.Operator {
					return NewStreamRank(StreamRankSpec{PartitionBy: []int{0, 1}, OrderBy: []SortKey{{Col: 2, Desc: true}, {Col: 3}},
						N: 2, RowNumber: rn}, rankOut(rn))
				}
				snapshotCut(t, mem, newOp, sampleRows(120, seed%2 == 1), 0, seed)
			})
		}
	}
}

func TestStreamRankErrors(t *testing.T) {
	for name, op := range map[string]*StreamRank{
		"n=0":     NewStreamRank(StreamRankSpec{OrderBy: []SortKey{{Col: 2}}, N: 0}, rankOut(false)),
		"no kind": NewStreamRank(StreamRankSpec{OrderBy: []SortKey{{Col: 2}}, N: 1}, SampleSchema),
	} {
		err := op.Process(context.Background(), 0, exec.NewRowBatch(SampleSchema, sampleRows(3, false)), &capture{})
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
