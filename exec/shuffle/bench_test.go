package shuffle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/recycle"
)

// benchRecord is the benchmark's batch: (k BIGINT, v BIGINT, f DOUBLE,
// s VARCHAR) with n rows, keys from a domain of 10,000, strings of 8-24
// bytes, no nulls.
func benchRecord(mem memory.Allocator, n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	rng := rand.New(rand.NewPCG(42, 42))
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	k := b.Field(0).(*array.Int64Builder)
	v := b.Field(1).(*array.Int64Builder)
	f := b.Field(2).(*array.Float64Builder)
	s := b.Field(3).(*array.StringBuilder)
	for i := range n {
		k.Append(rng.Int64N(10000))
		v.Append(int64(i))
		f.Append(rng.Float64())
		s.Append(fmt.Sprintf("auction-%0*d", 1+rng.IntN(16), i))
	}
	return b.NewRecordBatch()
}

// BenchmarkSplit: the keyed split of an 8192-row, 4-column batch, with the
// allocator an exchange uses by default (a Recycler over the Go allocator,
// each sub-record released right away as a consumer would). The seed's C++
// reference (index lists + Take, 1024-row batches): 14.4, 21.8, 37 and
// 68.6 ns/row at 2, 4, 8 and 16 targets.
func BenchmarkSplit(b *testing.B) {
	rec := benchRecord(memory.NewGoAllocator(), 8192)
	defer rec.Release()
	for _, targets := range []int{2, 4, 8, 16} {
		b.Run(fmt.Sprintf("targets=%d", targets), func(b *testing.B) {
			r := recycle.New(memory.NewGoAllocator(), RecycleLimit)
			defer r.Close()
			benchSplit(b, r, rec, targets)
		})
	}
}

// BenchmarkSplitGoAlloc is BenchmarkSplit with every sub-record fresh from
// the Go allocator: the exchange with CLINK_SHUFFLE_RECYCLE=off, and its
// default before recycling was.
func BenchmarkSplitGoAlloc(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := benchRecord(mem, 8192)
	defer rec.Release()
	for _, targets := range []int{2, 4, 8, 16} {
		b.Run(fmt.Sprintf("targets=%d", targets), func(b *testing.B) {
			benchSplit(b, mem, rec, targets)
		})
	}
}

func benchSplit(b *testing.B, mem memory.Allocator, rec arrow.RecordBatch, targets int) {
	var sc Scratch
	b.ReportAllocs()
	cpu0 := cpuNanos()
	for b.Loop() {
		out, err := Split(mem, rec, []int{0}, targets, &sc)
		if err != nil {
			b.Fatal(err)
		}
		releaseAll(out)
	}
	rows := float64(b.N) * float64(rec.NumRows())
	b.ReportMetric(float64(cpuNanos()-cpu0)/rows, "cpu-ns/row")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
}

// BenchmarkHashColumns is the routing pass alone (one int64 key).
func BenchmarkHashColumns(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := benchRecord(mem, 8192)
	defer rec.Release()
	out := make([]uint64, 8192)
	for b.Loop() {
		out = HashColumns(rec, []int{0}, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rec.NumRows()), "ns/row")
}

// cpuNanos is the process's user+system CPU time. On a shared machine the
// wall clock (ns/row) also counts the time spent waiting for a core; CPU
// time (cpu-ns/row, which includes the GC's background work) does not.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// discard is a routed emitter whose consumers drop every batch.
type discard struct{ n int }

func (d discard) Targets() int                                   { return d.n }
func (d discard) EmitTo(context.Context, int, *exec.Batch) error { return nil }
func (d discard) Emit(context.Context, *exec.Batch) error        { return nil }
func (d discard) EmitWatermark(context.Context, int64) error     { return nil }

// BenchmarkExchange is the whole columnar exchange on 8192-row batches:
// split, coalescing of sub-batches under CoalesceRows (from 16 targets on,
// every sub-batch is held once and concatenated), emit; recycle=true is the
// default.
func BenchmarkExchange(b *testing.B) {
	rec := benchRecord(memory.NewGoAllocator(), 8192)
	defer rec.Release()
	for _, recycle := range []bool{false, true} {
		for _, targets := range []int{2, 4, 8, 16} {
			b.Run(fmt.Sprintf("recycle=%v/targets=%d", recycle, targets), func(b *testing.B) {
				ex := NewExchange([]int{0}, memory.NewGoAllocator())
				if !recycle {
					ex.Recycle(0)
				}
				defer ex.Close()
				ctx := context.Background()
				out := discard{n: targets}
				in := exec.NewColumnarBatch(rec)
				rec.Retain()
				defer in.Release()
				cpu0 := cpuNanos()
				for b.Loop() {
					if _, err := ex.ProcessColumnar(ctx, 0, in, out); err != nil {
						b.Fatal(err)
					}
				}
				if err := ex.Finish(ctx, 0, out); err != nil {
					b.Fatal(err)
				}
				rows := float64(b.N) * float64(rec.NumRows())
				b.ReportMetric(float64(cpuNanos()-cpu0)/rows, "cpu-ns/row")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
			})
		}
	}
}
