package expr

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec/recycle"
)

// Per-node versus fused evaluation of TPC-H-shaped expressions over a
// lineitem-like table: 1M rows in 8K-row batches (the engine's batch
// size), DECIMAL(15, 2) columns as the Parquet scan hands them over.

const (
	liRows  = 1 << 20
	liBatch = 8192
)

var liSchema = arrow.NewSchema([]arrow.Field{
	{Name: "l_quantity", Type: decType(15, 2)},
	{Name: "l_extendedprice", Type: decType(15, 2)},
	{Name: "l_discount", Type: decType(15, 2)},
	{Name: "l_tax", Type: decType(15, 2)},
	{Name: "l_shipdate", Type: tDate},
	{Name: "l_type", Type: tStr},
	{Name: "k1", Type: tInt},
	{Name: "k2", Type: tBig},
	{Name: "k3", Type: tF64},
}, nil)

func liCol(name string) *ColRef {
	i := liSchema.FieldIndices(name)[0]
	return Col(i, liSchema.Field(i).Type, name)
}

// lineitems are the benchmark batches (built once).
var lineitems = func() []arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	var out []arrow.RecordBatch
	types := []string{"PROMO BRUSHED TIN", "STANDARD POLISHED", "ECONOMY ANODIZED", "LARGE BURNISHED", "MEDIUM PLATED", "SMALL PLATED"}
	for off := 0; off < liRows; off += liBatch {
		bs := make([]array.Builder, len(liSchema.Fields()))
		for i, f := range liSchema.Fields() {
			bs[i] = array.NewBuilder(mem, f.Type)
		}
		for i := 0; i < liBatch; i++ {
			q := int64(rng.Intn(50)+1) * 100
			bs[0].(*array.Decimal128Builder).Append(num128(q))
			bs[1].(*array.Decimal128Builder).Append(num128(q * int64(rng.Intn(100000)+90000) / 100))
			bs[2].(*array.Decimal128Builder).Append(num128(int64(rng.Intn(11))))
			bs[3].(*array.Decimal128Builder).Append(num128(int64(rng.Intn(9))))
			bs[4].(*array.Date32Builder).Append(arrow.Date32(8036 + rng.Intn(2526)))
			bs[5].(*array.StringBuilder).Append(types[rng.Intn(len(types))])
			bs[6].(*array.Int32Builder).Append(int32(rng.Intn(100)))
			bs[7].(*array.Int64Builder).Append(rng.Int63n(1000))
			bs[8].(*array.Float64Builder).Append(rng.Float64())
		}
		cols := make([]arrow.Array, len(bs))
		for i, b := range bs {
			cols[i] = b.NewArray()
			b.Release()
		}
		out = append(out, array.NewRecordBatch(liSchema, cols, liBatch))
		for _, c := range cols {
			c.Release()
		}
	}
	return out
}()

func numLit(s string) Expr { return must(NumberLit(s)) }

func bin(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }

// benchBoth runs e per node and fused, as a value (or a selection).
func benchBoth(b *testing.B, e Expr, pred bool) {
	mem := memory.NewGoAllocator()
	b.Run("per-node", func(b *testing.B) {
		b.ReportAllocs()
		var sel []int32
		for i := 0; i < b.N; i++ {
			for _, rec := range lineitems {
				if pred {
					m, err := EvalPredicate(mem, e, rec)
					if err != nil {
						b.Fatal(err)
					}
					sel = SelectionVector(m, sel)
					m.Release()
					continue
				}
				a, err := e.EvalColumnar(mem, rec)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/liRows, "ns/row")
	})
	b.Run("fused", func(b *testing.B) { benchFused(b, e, pred, nil) })
	if !pred {
		// As Project runs it: results built in recycled blocks.
		b.Run("fused-recycled", func(b *testing.B) {
			r := recycle.New(mem, 8<<20)
			defer r.Close()
			benchFused(b, e, pred, r)
		})
	}
}

// benchFused runs e fused, its results built in out (nil: mem).
func benchFused(b *testing.B, e Expr, pred bool, out memory.Allocator) {
	mem := memory.NewGoAllocator()
	b.ReportAllocs()
	f := NewFused(e, mem)
	if out != nil {
		f.SetOutput(out)
	}
	defer f.Release()
	var sel []int32
	for i := 0; i < b.N; i++ {
		for _, rec := range lineitems {
			if pred {
				var err error
				if sel, err = f.Select(mem, rec, sel); err != nil {
					b.Fatal(err)
				}
				continue
			}
			a, err := f.Eval(mem, rec)
			if err != nil {
				b.Fatal(err)
			}
			a.Release()
		}
	}
	if st := f.Stats(); st.Fallbacks+st.Reference > 0 {
		b.Fatalf("not fused: %+v", st)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/liRows, "ns/row")
}

var (
	discPrice = func() Expr {
		return bin("*", liCol("l_extendedprice"), bin("-", numLit("1"), liCol("l_discount")))
	}
	charge = func() Expr { return bin("*", discPrice(), bin("+", numLit("1"), liCol("l_tax"))) }
)

// TPC-H Q1: sum_disc_price's and sum_charge's arguments.
func BenchmarkQ1DiscPrice(b *testing.B) { benchBoth(b, discPrice(), false) }
func BenchmarkQ1Charge(b *testing.B)    { benchBoth(b, charge(), false) }

// TPC-H Q6's WHERE.
func BenchmarkQ6Predicate(b *testing.B) {
	e := bin("AND", bin("AND", bin("AND",
		bin(">=", liCol("l_shipdate"), Lit(arrow.Date32(8766), tDate)),
		bin("<", liCol("l_shipdate"), Lit(arrow.Date32(9131), tDate))),
		must(NewBetween(liCol("l_discount"), numLit("0.05"), numLit("0.07"), false))),
		bin("<", liCol("l_quantity"), numLit("24")))
	benchBoth(b, e, true)
}

// A 10-term AND over integers, doubles and decimals: each term keeps
// about 70% of the rows, the chain about 3%.
func BenchmarkAnd10(b *testing.B) {
	terms := []Expr{
		bin("<", liCol("k1"), numLit("70")),
		bin(">=", liCol("k2"), numLit("300")),
		bin("<", liCol("k3"), numLit("0.7e0")),
		bin("<", liCol("l_quantity"), numLit("35")),
		bin("<=", liCol("l_discount"), numLit("0.07")),
		bin(">", liCol("l_shipdate"), Lit(arrow.Date32(8800), tDate)),
		bin("<>", bin("%", liCol("k1"), numLit("3")), numLit("0")),
		bin("<", liCol("l_tax"), numLit("0.06")),
		bin(">", liCol("l_extendedprice"), numLit("20000")),
		bin("<", bin("+", liCol("k2"), liCol("k1")), numLit("800")),
	}
	e := terms[0]
	for _, t := range terms[1:] {
		e = bin("AND", e, t)
	}
	benchBoth(b, e, true)
}

// CASE chains: k arms on an integer, DECIMAL results.
func BenchmarkCaseChain(b *testing.B) {
	for _, arms := range []int{2, 5} {
		b.Run(fmt.Sprint(arms, "arms"), func(b *testing.B) {
			var ws []When
			for k := 1; k <= arms; k++ {
				ws = append(ws, When{Cond: bin("<", liCol("k1"), numLit(fmt.Sprint(100*k/(arms+1)))),
					Then: bin("*", liCol("l_extendedprice"), numLit(fmt.Sprintf("0.%02d", k)))})
			}
			benchBoth(b, must(NewCase(nil, ws, liCol("l_extendedprice"))), false)
		})
	}
}

// TPC-H Q14's CASE: a LIKE picks one row in six for the arithmetic arm.
func BenchmarkQ14Case(b *testing.B) {
	e := must(NewCase(nil, []When{{Cond: must(NewLike(liCol("l_type"), Lit("PROMO%", tStr), false)), Then: discPrice()}}, numLit("0")))
	benchBoth(b, e, false)
}
