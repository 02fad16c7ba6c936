package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// winBenchSchema: p BIGINT (1000 partitions, scattered), o BIGINT (the
// ORDER BY key, random, so every partition needs a real sort), v BIGINT.
var winBenchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "p", Type: arrow.PrimitiveTypes.Int64},
	{Name: "o", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64},
}, nil)

func winBenchBatches(mem memory.Allocator, n int) []*exec.Batch {
	r := rand.New(rand.NewPCG(1, 2))
	var out []*exec.Batch
	for start := 0; start < n; start += benchBatch {
		m := min(benchBatch, n-start)
		b := array.NewRecordBuilder(mem, winBenchSchema)
		for i := start; i < start+m; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(r.IntN(1000)))
			b.Field(1).(*array.Int64Builder).Append(r.Int64N(1 << 40))
			b.Field(2).(*array.Int64Builder).Append(int64(i % 100))
		}
		out = append(out, exec.NewColumnarBatch(b.NewRecordBatch()))
		b.Release()
	}
	return out
}

// benchWindow runs one window function over 1M rows in 1000 partitions
// ordered by a random key: columnar in and out, or (rows) row batches in
// and row output. ns/row covers buffering, partitioning, the sort, the
// function and building the output.
func benchWindow(b *testing.B, f WindowFunc, typ arrow.DataType, rows bool) {
	mem := memory.NewGoAllocator()
	const n = 1 << 20
	bs := winBenchBatches(mem, n)
	defer release(bs)
	if rows {
		for i, bt := range bs {
			bs[i] = exec.NewRowBatch(winBenchSchema, exec.DecodeRows(bt.Record()))
			bt.Release()
		}
	}
	out := arrow.NewSchema(append(winBenchSchema.Fields(), arrow.Field{Name: "w", Type: typ, Nullable: true}), nil)
	spec := WindowFuncsSpec{PartitionBy: []int{0}, OrderBy: []SortKey{{Col: 1}}, Funcs: []WindowFunc{f}}
	runBench(b, bs, n, func() exec.Operator {
		w := NewWindowFuncs(spec, out, mem)
		w.SetColumnarOutput(!rows)
		return w
	}, 1)
}

var benchSliding = &Frame{Unit: FrameRows, Start: FrameBound{Kind: OffsetPreceding, Offset: int64(10)}, End: FrameBound{Kind: CurrentRow}}

func BenchmarkWindowRowNumber(b *testing.B) {
	benchWindow(b, WindowFunc{Func: "row_number"}, arrow.PrimitiveTypes.Int64, false)
}

func BenchmarkWindowSlidingSum(b *testing.B) {
	benchWindow(b, WindowFunc{Func: "sum", Args: []int{2}, Frame: benchSliding}, arrow.PrimitiveTypes.Int64, false)
}

func BenchmarkWindowSlidingMax(b *testing.B) {
	benchWindow(b, WindowFunc{Func: "max", Args: []int{2}, Frame: benchSliding}, arrow.PrimitiveTypes.Int64, false)
}

func BenchmarkWindowRowNumberRows(b *testing.B) {
	benchWindow(b, WindowFunc{Func: "row_number"}, arrow.PrimitiveTypes.Int64, true)
}

func BenchmarkWindowSlidingSumRows(b *testing.B) {
	benchWindow(b, WindowFunc{Func: "sum", Args: []int{2}, Frame: benchSliding}, arrow.PrimitiveTypes.Int64, true)
}
