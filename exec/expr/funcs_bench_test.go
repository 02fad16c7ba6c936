package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Per-row cost of typed kernels in the columnar pipeline (ns/row).
func BenchmarkFunctions(b *testing.B) {
	for name, e := range map[string]Expr{
		"count_char_udf": must(NewFunc("count_char", []Expr{col("s"), Lit("a", tStr)})),
		"hour":           must(NewFunc("hour", []Expr{col("ts")})),
		"date_format":    must(NewFunc("date_format", []Expr{col("ts"), Lit("yyyy-MM-dd HH:mm", tStr)})),
		"round_dec":      must(NewFunc("round", []Expr{col("d"), must(NumberLit("1"))})),
	} {
		b.Run(name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rows := cachedRows(1000)
			rec := mkRecord(b, mem, rows)
			defer rec.Release()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a, err := e.EvalColumnar(mem, rec)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/row")
		})
	}
}
