package expr

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

const benchRows = 1 << 20

// priceRecord is a 1M-row BIGINT price column with ~1% NULLs.
func priceRecord(mem memory.Allocator) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "price", Type: tBig, Nullable: true}}, nil)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < benchRows; i++ {
		if rng.Intn(100) == 0 {
			b.AppendNull()
		} else {
			b.Append(rng.Int63n(10_000_000))
		}
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(schema, []arrow.Array{a}, benchRows)
}

func benchExpr(b *testing.B, build func(price Expr) (Expr, error), rowPath bool) {
	benchExprBatch(b, build, rowPath, benchRows)
}

// benchExprBatch evaluates the 1M rows as slices of batch rows each.
func benchExprBatch(b *testing.B, build func(price Expr) (Expr, error), rowPath bool, batch int) {
	mem := memory.NewGoAllocator()
	rec := priceRecord(mem)
	defer rec.Release()
	e, err := build(Col(0, tBig, "price"))
	if err != nil {
		b.Fatal(err)
	}
	var rows []exec.Row
	if rowPath {
		rows = exec.DecodeRows(rec)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rowPath {
			for _, r := range rows {
				if _, err := e.EvalRow(r); err != nil {
					b.Fatal(err)
				}
			}
			continue
		}
		for off := 0; off < benchRows; off += batch {
			sl := rec
			if batch < benchRows {
				sl = rec.NewSlice(int64(off), int64(off+batch))
			}
			out, err := e.EvalColumnar(mem, sl)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
			if batch < benchRows {
				sl.Release()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

func mulBuild(p Expr) (Expr, error) { return NewBinary("*", p, must(NumberLit("0.908"))) }
func gtBuild(p Expr) (Expr, error)  { return NewBinary(">", p, must(NumberLit("5000000"))) }

// price * 0.908: BIGINT widened to DECIMAL(19,0) times DECIMAL(3,3).
func BenchmarkMulDecimalColumnar(b *testing.B) { benchExpr(b, mulBuild, false) }
func BenchmarkMulDecimalRow(b *testing.B)      { benchExpr(b, mulBuild, true) }

// price > 5000000: the INT literal is widened to BIGINT once, at bind time.
func BenchmarkGreaterColumnar(b *testing.B) { benchExpr(b, gtBuild, false) }
func BenchmarkGreaterRow(b *testing.B)      { benchExpr(b, gtBuild, true) }

// The same over 64K-row batches: buffers stay cache- and allocator-friendly.
func BenchmarkMulDecimalColumnar64K(b *testing.B) { benchExprBatch(b, mulBuild, false, 1<<16) }
func BenchmarkGreaterColumnar64K(b *testing.B)    { benchExprBatch(b, gtBuild, false, 1<<16) }

// BenchmarkCompareDecimal: a DECIMAL(15,2) column of 8192 rows compared
// with a constant (TPC-H Q6's l_discount BETWEEN ...): "fits" takes the
// int64 loop, "wide" holds one value past int64, which sends the batch
// through the 128-bit compare. ns/row.
func BenchmarkCompareDecimal(b *testing.B) {
	mem := memory.NewGoAllocator()
	dt := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	for _, wide := range []bool{false, true} {
		bld := array.NewDecimal128Builder(mem, dt)
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 8192; i++ {
			bld.Append(decimal128.FromI64(rng.Int63n(11)))
		}
		a := bld.NewArray()
		bld.Release()
		if wide {
			a.(*array.Decimal128).Values()[100] = decimal128.New(1, 0)
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{a}, 8192)
		a.Release()
		e, err := NewBinary("<", Col(0, dt, "x"), Lit(decimal128.FromI64(6), dt))
		if err != nil {
			b.Fatal(err)
		}
		name := map[bool]string{false: "fits", true: "wide"}[wide]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				out, err := e.EvalColumnar(mem, rec)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*8192), "ns/row")
		})
		rec.Release()
	}
}
