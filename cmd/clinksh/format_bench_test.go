package main

import (
	"bufio"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// benchRecord is a nexmark-bid-shaped record of n rows.
func benchRecord(mem memory.Allocator, n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
		{Name: "bidder", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 18, Scale: 2}},
		{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "date_time", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	channels := []string{"Google", "Facebook", "Baidu", "channel, with \"quotes\""}
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(1000 + i%5000))
		b.Field(1).(*array.Int64Builder).Append(int64(i * 7))
		b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i*13) % 10000000))
		if i%10 == 9 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(channels[i%len(channels)])
		}
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(1700000000000 + int64(i)*37))
	}
	return b.NewRecordBatch()
}

func benchmarkSink(bm *testing.B, format string) {
	mem := memory.NewGoAllocator()
	const rows = 4096
	rec := benchRecord(mem, rows)
	batch := exec.NewColumnarBatch(rec)
	defer batch.Release()
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	s := newSink(format, sinkOptions{out: w, mem: mem})
	if err := s.Columns(rec.Schema(), false); err != nil {
		bm.Fatal(err)
	}
	bm.ReportAllocs()
	bm.ResetTimer()
	for i := 0; i < bm.N; i++ {
		if err := s.Batch(batch); err != nil {
			bm.Fatal(err)
		}
	}
	bm.StopTimer()
	perRow := float64(bm.Elapsed().Nanoseconds()) / float64(bm.N*rows)
	bm.ReportMetric(perRow, "ns/row")
	bm.ReportMetric(1e9/perRow, "rows/s")
}

func BenchmarkCSV(b *testing.B)    { benchmarkSink(b, formatCSV) }
func BenchmarkNDJSON(b *testing.B) { benchmarkSink(b, formatNDJSON) }

// The tableau (unbounded table) path: fixed widths, one line per row.
func BenchmarkTableau(b *testing.B) { benchmarkSink(b, formatTable) }
