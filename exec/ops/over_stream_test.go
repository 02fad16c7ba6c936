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

var overFuncs = []StreamOverFunc{
	{Func: "count_star", Arg: -1, Type: arrow.PrimitiveTypes.Int64},
	{Func: "count", Arg: 2, Type: arrow.PrimitiveTypes.Int64},
	{Func: "sum", Arg: 2, Type: arrow.PrimitiveTypes.Int64},
	{Func: "avg", Arg: 2, Type: arrow.PrimitiveTypes.Float64},
	{Func: "min", Arg: 1, Type: arrow.BinaryTypes.String},
	{Func: "max", Arg: 3, Type: arrow.PrimitiveTypes.Float64},
}

func overOut() *arrow.Schema {
	fs := append([]arrow.Field{}, SampleSchema.Fields()...)
	for i, f := range overFuncs {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("f%d", i), Type: f.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// overRef is the reference: per key k, rows by time t (ties by arrival),
// each with count(*), count(v), sum(v), avg(v), min(s), max(f) over its
// frame, found by scanning the key's rows: ROWS, the row and the n before
// it; RANGE, every row with a time in [t - p, t] (peers after it too).
// preceding < 0 is UNBOUNDED.
func overRef(in []exec.Row, rows bool, preceding int64) []exec.Row {
	byKey := map[string][]exec.Row{}
	for _, r := range in {
		if r[4] != nil {
			k := fmt.Sprint(r[0])
			byKey[k] = append(byKey[k], r)
		}
	}
	ts := func(r exec.Row) int64 { return int64(r[4].(arrow.Timestamp)) * 1000 }
	var out []exec.Row
	for _, rs := range byKey {
		sort.SliceStable(rs, func(i, j int) bool { return ts(rs[i]) < ts(rs[j]) })
		for i, r := range rs {
			var frame []exec.Row
			for j, x := range rs {
				var in bool
				if rows {
					in = j <= i && (preceding < 0 || j >= i-int(preceding))
				} else {
					in = ts(x) <= ts(r) && (preceding < 0 || ts(x) >= ts(r)-preceding)
				}
				if in {
					frame = append(frame, x)
				}
			}
			var n, sum int64
			var minS, maxF any
			for _, x := range frame {
				if v, ok := x[2].(int64); ok {
					n++
					sum += v
				}
				if s, ok := x[1].(string); ok && (minS == nil || s < minS.(string)) {
					minS = s
				}
				if f, ok := x[3].(float64); ok && (maxF == nil || f > maxF.(float64)) {
					maxF = f
				}
			}
			var sumV, avgV any
			if n > 0 {
				sumV, avgV = sum, float64(sum)/float64(n)
			}
			out = append(out, append(append(exec.Row{}, r...), int64(len(frame)), n, sumV, avgV, minS, maxF))
		}
	}
	return out
}

// Under the operator harness (the watermark only at the end): every frame
// kind agrees with the reference.
func TestStreamOverAggAgrees(t *testing.T) {
	for _, c := range []struct {
		name      string
		rows      bool
		preceding int64
	}{
		{"rows 2 preceding", true, 2},
		{"rows 0 preceding", true, 0},
		{"rows unbounded", true, -1},
		{"range 1s preceding", false, 1_000_000},
		{"range unbounded", false, -1},
	} {
		runCase(t, opCase{
			name: c.name,
			newOp: func(memory.Allocator) exec.Operator {
				return NewStreamOverAgg(StreamOverSpec{PartitionBy: []int{0}, TimeCol: 4, Rows: c.rows, Preceding: c.preceding, Funcs: overFuncs}, overOut())
			},
			inputs: func(nulls bool) []input {
				rows := reversedTimes(150, nulls)
				for i := range rows {
					if i%13 == 5 { // peers: a time shared with the row before
						rows[i][4] = rows[i-1][4]
					}
				}
				return []input{{SampleSchema, rows}}
			},
			want: func(ins []input) []exec.Row { return overRef(ins[0].rows, c.rows, c.preceding) },
		})
	}
}

// Rows leave once the watermark passes them; a row behind the watermark
// is late.
func TestStreamOverAggWatermark(t *testing.T) {
	ctx := context.Background()
	o := NewStreamOverAgg(StreamOverSpec{PartitionBy: []int{0}, TimeCol: 4, Rows: true, Preceding: 1, Funcs: overFuncs[2:3]},
		arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), arrow.Field{Name: "s", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil))
	defer o.Close()
	row := func(v, ms int64) exec.Row { return exec.Row{int64(1), "x", v, 0.0, arrow.Timestamp(ms)} }
	c := &capture{}
	if err := o.Process(ctx, 0, exec.NewRowBatch(SampleSchema, []exec.Row{row(10, 300), row(1, 100), row(5, 200)}), c); err != nil {
		t.Fatal(err)
	}
	if err := o.OnWatermark(ctx, 200_000, c); err != nil {
		t.Fatal(err)
	}
	got, _ := c.rows()
	// By time: 1 (sum 1), 5 (1 + 5); 10 waits for the watermark.
	if len(got) != 2 || got[0][5] != int64(1) || got[1][5] != int64(6) {
		t.Fatalf("got %v", got)
	}
	if err := o.Process(ctx, 0, exec.NewRowBatch(SampleSchema, []exec.Row{row(7, 150)}), c); err != nil {
		t.Fatal(err)
	}
	if err := o.Finish(ctx, 0, c); err != nil {
		t.Fatal(err)
	}
	got, _ = c.rows()
	if len(got) != 1 || got[0][5] != int64(15) {
		t.Fatalf("got %v, want 10 with sum 5 + 10", got)
	}
	if n := o.Report().Counters[0]; n.Value != 1 {
		t.Fatalf("%s = %d, want 1", n.Name, n.Value)
	}
}

func TestStreamOverAggSnapshotRoundTrip(t *testing.T) {
	for seed := range uint64(6) {
		for _, c := range []struct {
			rows      bool
			preceding int64
		}{{true, 3}, {false, 2_000_000}, {true, -1}, {false, -1}} {
			t.Run(fmt.Sprintf("seed=%d/rows=%v/preceding=%d", seed, c.rows, c.preceding), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				newOp := func() exec.Operator {
					return NewStreamOverAgg(StreamOverSpec{PartitionBy: []int{0}, TimeCol: 4, Rows: c.rows, Preceding: c.preceding, Funcs: overFuncs}, overOut())
				}
				snapshotCut(t, mem, newOp, reversedTimes(150, seed%2 == 1), 2, seed)
			})
		}
	}
}
