package expr

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// shipdateRecord is a 1M-row DATE column (TPC-H's l_shipdate range).
func shipdateRecord(mem memory.Allocator) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "l_shipdate", Type: tDate}}, nil)
	b := array.NewDate32Builder(mem)
	defer b.Release()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < benchRows; i++ {
		b.Append(arrow.Date32(8036 + rng.Intn(2526))) // 1992-01-02 .. 1998-12-01
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(schema, []arrow.Array{a}, benchRows)
}

// TPC-H Q1's l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY: the
// bound folds to a TIMESTAMP and the comparison runs on the DATE column's
// days ("days"); "widened" is the same predicate with the column cast to
// TIMESTAMP per row, what a plain common-type comparison would do.
func BenchmarkShipdatePredicate(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := shipdateRecord(mem)
	defer rec.Release()
	day := Col(0, tDate, "l_shipdate")
	bound := must(NewBinary("-", Lit(arrow.Date32(10561), tDate), Lit(arrow.MonthDayNanoInterval{Days: 90}, tIv)))
	for _, c := range []struct {
		name string
		e    Expr
	}{
		{"days", must(NewBinary("<=", day, bound))},
		{"widened", &Compare{op: opLe, l: must(NewCast(day, tTsUs)), r: bound}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, err := c.e.EvalColumnar(mem, rec)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		})
	}
}
