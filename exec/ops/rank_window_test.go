package ops

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// windowed is SampleSchema with a window_end column: t's 3 s tumbling
// window's end (NULL when t is).
var windowed = arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
	arrow.Field{Name: "window_end", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true}), nil)

func windowedRows(n int, nulls bool) []exec.Row {
	rows := reversedTimes(n, nulls)
	for i, r := range rows {
		var end any
		if ts, ok := r[4].(arrow.Timestamp); ok {
			end = arrow.Timestamp((int64(ts)/3000 + 1) * 3000)
		}
		rows[i] = append(r, end)
	}
	return rows
}

func windowRankOut(rowNumber bool) *arrow.Schema {
	if !rowNumber {
		return windowed
	}
	return arrow.NewSchema(append(append([]arrow.Field{}, windowed.Fields()...), arrow.Field{Name: "rn", Type: arrow.PrimitiveTypes.Int64}), nil)
}

// windowTopRef is the reference: per (window_end, k), the rows by v DESC
// (NULLs last, ties by arrival), the first n, each with its rank.
func windowTopRef(rows []exec.Row, n int, rowNumber bool) []exec.Row {
	groups := map[string][]exec.Row{}
	var order []string
	for _, r := range rows {
		if r[5] == nil {
			continue
		}
		k := fmt.Sprint(r[5], r[0])
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []exec.Row
	for _, k := range order {
		rs := groups[k]
		sort.SliceStable(rs, func(i, j int) bool {
			a, aok := rs[i][2].(int64)
			b, bok := rs[j][2].(int64)
			if aok != bok {
				return aok
			}
			return aok && a > b
		})
		for i := 0; i < n && i < len(rs); i++ {
			r := rs[i]
			if rowNumber {
				r = append(append(exec.Row{}, r...), int64(i+1))
			}
			out = append(out, r)
		}
	}
	return out
}

func newWindowRank(mem memory.Allocator, rowNumber bool) *WindowRank {
	return NewWindowRank(WindowRankSpec{StreamRankSpec: StreamRankSpec{PartitionBy: []int{5, 0},
		OrderBy: []SortKey{{Col: 2, Desc: true}}, N: 2, RowNumber: rowNumber}, EndCol: 5}, windowRankOut(rowNumber), mem)
}

// Under the operator harness (every window fires at the end): each
// window's top rows per key, columnar output on and off.
func TestWindowRankAgrees(t *testing.T) {
	for _, rn := range []bool{true, false} {
		runCase(t, opCase{
			name:   fmt.Sprintf("rn=%v", rn),
			newOp:  func(mem memory.Allocator) exec.Operator { return newWindowRank(mem, rn) },
			inputs: func(nulls bool) []input { return []input{{windowed, windowedRows(150, nulls)}} },
			want:   func(ins []input) []exec.Row { return windowTopRef(ins[0].rows, 2, rn) },
		})
	}
}

// A window fires once the watermark passes its last millisecond; a row
// of a fired window is late.
func TestWindowRankFiresWithWatermark(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newWindowRank(mem, true)
	r.SetColumnarOutput(true)
	defer r.Close()
	row := func(v, end int64) exec.Row {
		return exec.Row{int64(1), "x", v, 0.0, arrow.Timestamp(end - 1), arrow.Timestamp(end)}
	}
	c := &capture{}
	if err := r.Process(ctx, 0, exec.NewRowBatch(windowed, []exec.Row{row(1, 3000), row(5, 3000), row(3, 3000), row(9, 6000)}), c); err != nil {
		t.Fatal(err)
	}
	if err := r.OnWatermark(ctx, 2_998_000, c); err != nil {
		t.Fatal(err)
	}
	if len(c.batches) != 0 {
		t.Fatal("a window fired before the watermark passed its last millisecond")
	}
	if err := r.OnWatermark(ctx, 2_999_000, c); err != nil {
		t.Fatal(err)
	}
	got, columnar := c.rows()
	if columnar != 1 || len(got) != 2 || got[0][2] != int64(5) || got[1][2] != int64(3) || got[1][6] != int64(2) {
		t.Fatalf("got %v (%d columnar batches), want 5 and 3 ranked 1 and 2, born columnar", got, columnar)
	}
	if err := r.Process(ctx, 0, exec.NewRowBatch(windowed, []exec.Row{row(7, 3000)}), c); err != nil {
		t.Fatal(err)
	}
	if n := r.Report().Counters[0]; n.Value != 1 || r.OpenWindows() != 1 {
		t.Fatalf("%s = %d, open windows %d; want 1 and 1", n.Name, n.Value, r.OpenWindows())
	}
}

func TestWindowRankSnapshotRoundTrip(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			newOp := func() exec.Operator { return newWindowRank(mem, seed%2 == 0) }
			snapshotCutInput(t, mem, newOp, input{windowed, windowedRows(150, seed%3 == 0)}, 2, seed)
		})
	}
}

// BenchmarkRankIngest feeds 64k rows in batches of 4096, columnar, to a
// top-3 per key (StreamRank, 16 keys; WindowRank, one key per 3 s window)
// through the columnar hook and through the row path.
func BenchmarkRankIngest(b *testing.B) {
	rows := windowedRows(1<<16, false)
	for _, c := range []struct {
		name  string
		newOp func(mem memory.Allocator) exec.Operator
	}{
		{"stream_rank", func(memory.Allocator) exec.Operator {
			return NewStreamRank(StreamRankSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 2, Desc: true}}, N: 3},
				arrow.NewSchema(append(append([]arrow.Field{}, windowed.Fields()...), arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil))
		}},
		{"window_rank", func(mem memory.Allocator) exec.Operator { return newWindowRank(mem, true) }},
	} {
		for _, colOn := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/columnar=%v", c.name, colOn), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				batches := makeBatches(b, mem, input{windowed, rows}, 4096, true)
				b.ResetTimer()
				for range b.N {
					op := c.newOp(mem)
					for _, bt := range batches {
						// A fresh batch each time: the row path's decode is
						// cached on the batch.
						fresh := exec.NewColumnarBatch(bt.Record())
						bt.Record().Retain()
						if _, err := exec.Dispatch(context.Background(), op, colOn, 0, fresh, &capture{}); err != nil {
							b.Fatal(err)
						}
						fresh.Release()
					}
					op.Close()
				}
			})
		}
	}
}
