package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The fused evaluator against the row path and the per-node path, over
// random expression trees on columns built to hit the int64 decimal
// path's edges: DECIMAL(15, 2) like TPC-H's, DECIMAL(18, s) at the edge of
// 18 digits, DECIMAL(38, s) holding values both inside and far outside
// int64, integers at their extremes, divisors that are often zero.

var fzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: tInt, Nullable: true},               // 0: wide range, extremes
	{Name: "b", Type: tInt, Nullable: true},               // 1: small, zero often
	{Name: "x", Type: tBig, Nullable: true},               // 2: moderate, extremes rarely
	{Name: "f", Type: tF64, Nullable: true},               // 3
	{Name: "p", Type: decType(15, 2), Nullable: false},    // 4: prices, no NULLs
	{Name: "q", Type: decType(15, 2), Nullable: false},    // 5: 0.00 .. 0.10, no NULLs
	{Name: "r", Type: decType(18, 0), Nullable: true},     // 6: up to 18 digits
	{Name: "s", Type: decType(18, 9), Nullable: true},     // 7
	{Name: "w", Type: decType(38, 6), Nullable: true},     // 8: usually narrow, sometimes huge
	{Name: "z", Type: decType(38, 0), Nullable: true},     // 9: up to 38 digits
	{Name: "t", Type: tBool, Nullable: true},              // 10
	{Name: "u", Type: tBool, Nullable: true},              // 11
	{Name: "dt", Type: tDate, Nullable: true},             // 12
	{Name: "ts", Type: tTsUs, Nullable: true},             // 13
	{Name: "str", Type: tStr, Nullable: true},             // 14
	{Name: "v", Type: decType(9, 4), Nullable: true},      // 15: rarely non-NULL
	{Name: "ff", Type: tF32, Nullable: true},              // 16
	{Name: "big", Type: decType(38, 10), Nullable: false}, // 17: always wide
}, nil)

func fzCol(name string) *ColRef {
	idx := fzSchema.FieldIndices(name)[0]
	return Col(idx, fzSchema.Field(idx).Type, name)
}

// randDec is a random unscaled value with at most p digits, biased to the
// extremes: zero, tiny, the largest p-digit values, and in between.
func randDec(rng *rand.Rand, p int32) num {
	lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)
	var v *big.Int
	switch rng.Intn(6) {
	case 0:
		v = big.NewInt(0)
	case 1:
		v = big.NewInt(rng.Int63n(1000))
	case 2: // the largest values
		v = new(big.Int).Sub(lim, big.NewInt(1+rng.Int63n(3)))
	case 3: // around 2^63
		v = new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 63), big.NewInt(rng.Int63n(5)-3))
		if v.Cmp(lim) >= 0 {
			v = new(big.Int).Rand(rng, lim)
		}
	default:
		v = new(big.Int).Rand(rng, lim)
	}
	if rng.Intn(2) == 0 {
		v.Neg(v)
	}
	return num128FromBig(v)
}

func num128FromBig(v *big.Int) num { return decimal128.FromBigInt(v) }

func fzRows(n int, seed int64) []exec.Row {
	rng := rand.New(rand.NewSource(seed))
	rows := make([]exec.Row, n)
	for i := range rows {
		row := make(exec.Row, len(fzSchema.Fields()))
		set := func(c int, v any) {
			if !fzSchema.Field(c).Nullable || rng.Intn(8) != 0 {
				row[c] = v
			}
		}
		switch rng.Intn(12) {
		case 0:
			set(0, int32(math.MaxInt32-rng.Intn(3)))
		case 1:
			set(0, int32(math.MinInt32+rng.Intn(3)))
		default:
			set(0, int32(rng.Intn(200001)-100000))
		}
		set(1, int32(rng.Intn(7)-3))
		switch rng.Intn(40) {
		case 0:
			set(2, int64(math.MaxInt64-rng.Intn(3)))
		case 1:
			set(2, int64(math.MinInt64+rng.Intn(3)))
		default:
			set(2, rng.Int63n(2_000_000_000)-1_000_000_000)
		}
		set(3, []float64{0, -0.5, 2.5, 1e300, math.Inf(-1), math.NaN(), rng.NormFloat64() * 1e6}[rng.Intn(7)])
		price := rng.Int63n(10_000_000) + 90_000
		if rng.Intn(50) == 0 {
			price = 999_999_999_999_999 - rng.Int63n(3)
		}
		set(4, num128(price))
		set(5, num128(rng.Int63n(11)))
		set(6, randDec(rng, 18))
		set(7, randDec(rng, 18))
		if rng.Intn(4) == 0 {
			set(8, randDec(rng, 38))
		} else {
			set(8, num128(rng.Int63n(2_000_000_000)-1_000_000_000))
		}
		set(9, randDec(rng, 38))
		set(10, rng.Intn(3) == 0)
		set(11, rng.Intn(2) == 0)
		set(12, arrow.Date32(9000+rng.Intn(2000)))
		set(13, arrow.Timestamp(int64(9000+rng.Intn(2000))*86_400_000_000+rng.Int63n(86_400_000_000)))
		set(14, []string{"", "AIR", "AIR REG", "MAIL", "PROMO BRUSHED", "PROMO", "SM CASE", "xyz"}[rng.Intn(8)])
		if rng.Intn(20) == 0 {
			set(15, randDec(rng, 9))
		}
		set(16, float32(rng.NormFloat64()*100))
		set(17, num128FromBig(new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 70), big.NewInt(rng.Int63()))))
		rows[i] = row
	}
	return rows
}

// exprGen builds random, well-typed expressions over fzSchema.
type exprGen struct {
	rng *rand.Rand
}

func (g *exprGen) pick(xs ...string) string { return xs[g.rng.Intn(len(xs))] }

func (g *exprGen) numLeaf() Expr {
	switch g.rng.Intn(10) {
	case 0:
		return must(NumberLit(g.pick("0", "1", "7", "-3", "100", "2147483647")))
	case 1:
		return must(NumberLit(g.pick("0.05", "0.07", "1.5", "24.00", "999999999999999.99", "0.000000001", "12345678901234567890.5", "9999999999999999999999999999999999999")))
	case 2:
		return must(NumberLit(g.pick("2.5e0", "1e-3", "0e0")))
	case 3:
		return Lit(nil, arrow.Null)
	}
	return fzCol(g.pick("a", "b", "x", "f", "p", "q", "r", "s", "w", "z", "v", "ff", "big", "p", "q", "p"))
}

func (g *exprGen) num(depth int) Expr {
	if depth <= 0 || g.rng.Intn(4) == 0 {
		return g.numLeaf()
	}
	for {
		var e Expr
		var err error
		switch g.rng.Intn(9) {
		case 0, 1, 2, 3:
			e, err = NewBinary(g.pick("+", "-", "*", "/", "%", "+", "-", "*"), g.num(depth-1), g.num(depth-1))
		case 4:
			e, err = NewNeg(g.num(depth - 1))
		case 5:
			to := []arrow.DataType{tInt, tBig, tF64, tF32, decType(15, 2), decType(18, 4), decType(10, 0), decType(38, 6), decType(20, 2), decType(5, 3)}[g.rng.Intn(10)]
			e, err = NewCast(g.num(depth-1), to)
		case 6:
			var els Expr
			if g.rng.Intn(3) > 0 {
				els = g.num(depth - 1)
			}
			e, err = NewCase(nil, []When{{Cond: g.boolean(depth - 1), Then: g.num(depth - 1)}}, els)
		case 7:
			e, err = NewFunc("coalesce", []Expr{g.num(depth - 1), g.num(depth - 1)})
		default:
			e, err = NewCase(nil, []When{{Cond: g.boolean(depth - 1), Then: g.num(depth - 1)}, {Cond: g.boolean(depth - 1), Then: g.num(depth - 1)}}, g.num(depth-1))
		}
		if err == nil && isNumeric(e.Type()) {
			return e
		}
	}
}

func (g *exprGen) boolean(depth int) Expr {
	for {
		var e Expr
		var err error
		switch g.rng.Intn(12) {
		case 0, 1, 2:
			e, err = NewBinary(g.pick("=", "<>", "<", "<=", ">", ">="), g.num(depth-1), g.num(depth-1))
		case 3:
			if depth <= 0 {
				e = fzCol(g.pick("t", "u"))
				break
			}
			e, err = NewBinary(g.pick("AND", "OR"), g.boolean(depth-1), g.boolean(depth-1))
		case 4:
			if depth <= 0 {
				e = Lit(g.rng.Intn(2) == 0, tBool)
				break
			}
			e, err = NewNot(g.boolean(depth - 1))
		case 5:
			e = NewIsNull(g.num(depth-1), g.rng.Intn(2) == 0)
		case 6:
			items := []Expr{g.numLeaf(), g.numLeaf()}
			if g.rng.Intn(2) == 0 {
				items = append(items, must(NumberLit("0")), must(NumberLit("1.00")))
			}
			e, err = NewIn(g.num(depth-1), items, g.rng.Intn(3) == 0)
		case 7:
			e, err = NewBetween(g.num(depth-1), g.numLeaf(), g.numLeaf(), g.rng.Intn(3) == 0)
		case 8:
			s := Lit(g.pick("AIR", "PROMO", "MAIL", "", "zzz"), tStr)
			switch g.rng.Intn(4) {
			case 0:
				e, err = NewLike(fzCol("str"), Lit(g.pick("PROMO%", "%AIR%", "%REG", "A_R", "%"), tStr), g.rng.Intn(2) == 0)
			case 1:
				e, err = NewIn(fzCol("str"), []Expr{Lit("AIR", tStr), Lit("AIR REG", tStr)}, g.rng.Intn(3) == 0)
			default:
				e, err = NewBinary(g.pick("=", "<>", "<", ">="), fzCol("str"), s)
			}
		case 9:
			e, err = NewBinary(g.pick("<", ">=", "="), fzCol(g.pick("dt", "ts")), Lit(g.pick("1995-01-01", "1996-03-15 12:00:00"), tStr))
		case 10:
			e, err = NewBinary(g.pick("=", "<>", "<"), fzCol("t"), fzCol(g.pick("u", "t")))
		default:
			e = fzCol(g.pick("t", "u"))
		}
		if err == nil && e.Type().ID() == arrow.BOOL {
			return e
		}
	}
}

// checkThree evaluates e by the row path, the per-node path and a Fused
// and fails unless all three give the same values. Where the row path
// fails, both columnar paths must fail too; which error they report may
// differ from the row path's when several rows fail in different nodes
// (the per-node path evaluates node by node), but the fused path must
// report exactly the per-node path's, which it falls back to.
func checkThree(t *testing.T, mem memory.Allocator, e Expr, rec arrow.RecordBatch, rows []exec.Row) FusedStats {
	t.Helper()
	var rowErr error
	want := make([]any, len(rows))
	for i, r := range rows {
		v, err := e.EvalRow(r)
		if err != nil {
			rowErr = err
			break
		}
		want[i] = v
	}
	arr, colErr := e.EvalColumnar(mem, rec)
	switch {
	case (colErr == nil) != (rowErr == nil):
		t.Fatalf("%s: row error %v, per-node error %v", e, rowErr, colErr)
	case colErr == nil:
		checkArray(t, "per-node", e, arr, want)
		arr.Release()
	}
	st := checkFused(t, mem, e, rec, want, colErr)
	if colErr == nil {
		spurious += st.Fallbacks
	}
	return st
}

// spurious counts fallbacks on batches that evaluate without error.
var spurious int

func TestFusedRandomTrees(t *testing.T) {
	strictFallback = false
	defer func() { strictFallback = true }()
	n := 600
	if testing.Short() {
		n = 150
	}
	sizes := []int{0, 1, 7, 1000, 3000}
	rowsBy, recs := encodeSizes(t, fzSchema, sizes, func(k int) []exec.Row { return fzRows(k, int64(k)+11) })
	slice := recs[3000].NewSlice(3, 2999)
	defer slice.Release()
	g := &exprGen{rng: rand.New(rand.NewSource(fzSeed))}
	var total FusedStats
	errs := 0
	for i := 0; i < n; i++ {
		var e Expr
		if i%2 == 0 {
			e = g.num(3)
		} else {
			e = g.boolean(3)
		}
		if _, isLit := e.(*Literal); isLit {
			continue
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			mem := newMem(t)
			for _, k := range sizes {
				st := checkThree(t, mem, e, recs[k], rowsBy[k])
				total.Fused += st.Fused
				total.Fallbacks += st.Fallbacks
			}
			st := checkThree(t, mem, e, slice, rowsBy[3000][3:2999])
			if st.Fallbacks > 0 {
				errs++
			}
		})
	}
	// The fused path must carry most batches (the rest met real errors).
	if total.Fused < total.Fallbacks*2 {
		t.Fatalf("fused %d batches, fell back on %d", total.Fused, total.Fallbacks)
	}
	t.Logf("fused %d batches, %d fell back (%d without an error), %d expressions with an error on the sliced batch", total.Fused, total.Fallbacks, spurious, errs)
}

// encodeSizes generates and encodes one batch of each size (released when
// the test ends), in an unchecked allocator: the checked one is the
// expressions'.
func encodeSizes(t *testing.T, schema *arrow.Schema, sizes []int, gen func(n int) []exec.Row) (map[int][]exec.Row, map[int]arrow.RecordBatch) {
	rowsBy := map[int][]exec.Row{}
	recs := map[int]arrow.RecordBatch{}
	for _, k := range sizes {
		rowsBy[k] = gen(k)
		rec, err := exec.EncodeRows(memory.NewGoAllocator(), schema, rowsBy[k])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rec.Release)
		recs[k] = rec
	}
	return rowsBy, recs
}

// fzSeed seeds the random trees (a fixed seed: a failure reproduces).
var fzSeed = int64(7)
