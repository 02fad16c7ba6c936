package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// Short-circuit agreement: random expressions in which an operand that
// fails (DECIMAL overflow past 38 digits, BIGINT overflow, a CAST out of
// range) sits under a CASE, COALESCE, AND or OR that never evaluates it on
// the rows where it would fail. The row path evaluates such an expression
// without error, so the per-node and the fused paths must too, with the
// same values: a fused kernel may compute a failing operand over rows it
// then discards, but must not report their failure (at worst it falls
// back to the per-node path). The failing rows ("hazard" rows) come in
// chunk-aligned runs of every density, so whole chunks are all safe, all
// hazard, or mixed, and the guards' NULLs must count as not taken.

var sgSchema = arrow.NewSchema([]arrow.Field{
	{Name: "g", Type: tBool, Nullable: true},           // 0: TRUE on safe rows; FALSE or NULL on hazard rows
	{Name: "h", Type: tBool, Nullable: true},           // 1: random
	{Name: "d", Type: decType(38, 0), Nullable: true},  // 2: 38 digits on hazard rows
	{Name: "e", Type: decType(38, 2), Nullable: true},  // 3: 36 integer digits on hazard rows
	{Name: "i", Type: tBig, Nullable: true},            // 4: near the BIGINT limits on hazard rows
	{Name: "b", Type: tInt, Nullable: true},            // 5: small, zero often (division by zero is NULL)
	{Name: "s", Type: decType(15, 2), Nullable: true},  // 6: prices
	{Name: "k", Type: decType(18, 0), Nullable: false}, // 7: narrow, never NULL
}, nil)

func sgCol(name string) *ColRef {
	idx := sgSchema.FieldIndices(name)[0]
	return Col(idx, sgSchema.Field(idx).Type, name)
}

// sgRows builds n rows; each 1024-row chunk has its own hazard density.
func sgRows(n int, seed int64) []exec.Row {
	rng := rand.New(rand.NewSource(seed))
	p38 := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	rows := make([]exec.Row, n)
	var density float64
	for r := range rows {
		if r%chunkRows == 0 {
			density = []float64{0, 0.003, 0.05, 0.5, 1}[rng.Intn(5)]
		}
		hazard := rng.Float64() < density
		sign := int64(1 - 2*rng.Intn(2))
		row := make(exec.Row, len(sgSchema.Fields()))
		maybe := func(c int, v any) {
			if rng.Intn(10) != 0 {
				row[c] = v
			}
		}
		if hazard {
			if rng.Intn(3) > 0 {
				row[0] = false
			} // else NULL: a NULL guard is not taken either
			v := new(big.Int).Sub(p38, big.NewInt(1+rng.Int63n(5)))
			row[2] = num128FromBig(v.Mul(v, big.NewInt(sign)))
			// DECIMAL(38, 2): the largest values, whose sum overflows.
			row[3] = num128FromBig(new(big.Int).Mul(new(big.Int).Sub(p38, big.NewInt(1+rng.Int63n(100))), big.NewInt(sign)))
			if sign > 0 {
				row[4] = int64(math.MaxInt64 - rng.Intn(3))
			} else {
				row[4] = int64(math.MinInt64 + rng.Intn(3))
			}
		} else {
			row[0] = true
			maybe(2, num128(rng.Int63n(2e12)-1e12))
			maybe(3, num128(rng.Int63n(2e9)-1e9))
			maybe(4, rng.Int63n(2e6)-1e6)
		}
		maybe(1, rng.Intn(2) == 0)
		maybe(5, int32(rng.Intn(5)-2))
		maybe(6, num128(rng.Int63n(10_000_000)))
		row[7] = num128(rng.Int63n(2e15) - 1e15)
		rows[r] = row
	}
	return rows
}

// guardGen builds expressions that fail only on hazard rows, and guards
// that keep them off those rows.
type guardGen struct{ rng *rand.Rand }

func (g *guardGen) lit(s string) Expr { return must(NumberLit(s)) }

// risky is a numeric expression that fails on every hazard row whose
// operands are not NULL, and evaluates on every safe row.
func (g *guardGen) risky() Expr {
	d, e, i := sgCol("d"), sgCol("e"), sgCol("i")
	switch g.rng.Intn(8) {
	case 0:
		return must(NewBinary("*", d, g.lit("10")))
	case 1:
		return must(NewBinary("+", d, d))
	case 2:
		return must(NewBinary("+", e, e))
	case 3:
		return must(NewBinary("*", i, g.lit("3")))
	case 4:
		return must(NewBinary("+", i, i))
	case 5:
		return must(NewCast(d, decType(18, 0)))
	case 6:
		return must(NewCast(i, tInt))
	default:
		return must(NewBinary("-", must(NewBinary("*", e, g.lit("100"))), sgCol("s")))
	}
}

// safe is a numeric expression that evaluates on every row; some of its
// values are NULL (NULL operands, division by zero).
func (g *guardGen) safe(depth int) Expr {
	switch g.rng.Intn(7) {
	case 0:
		return sgCol("s")
	case 1:
		return sgCol("k")
	case 2:
		return must(NewBinary("/", sgCol("k"), sgCol("b")))
	case 3:
		return must(NewBinary("%", sgCol("s"), sgCol("b")))
	case 4:
		return Lit(nil, arrow.Null)
	case 5:
		return must(NewBinary("*", sgCol("s"), g.lit("1.5")))
	}
	if depth > 0 {
		return g.guarded(depth - 1)
	}
	return sgCol("k")
}

// taken is a predicate TRUE only on safe rows (FALSE or NULL on hazard
// rows); where it must steer a CASE's ELSE away from a failing operand the
// caller wraps it in COALESCE(..., FALSE).
func (g *guardGen) taken() Expr {
	gc := sgCol("g")
	switch g.rng.Intn(4) {
	case 0:
		return gc
	case 1: // g AND h OR g AND NOT h: TRUE only where g is
		return must(NewBinary("OR", must(NewBinary("AND", gc, sgCol("h"))), must(NewBinary("AND", gc, must(NewNot(sgCol("h")))))))
	case 2:
		return must(NewBinary("=", gc, Lit(true, tBool)))
	default:
		return must(NewBinary("AND", NewIsNull(gc, true), gc))
	}
}

// guarded is a numeric expression with failing operands under guards.
func (g *guardGen) guarded(depth int) Expr {
	for {
		var e Expr
		var err error
		switch g.rng.Intn(6) {
		case 0: // CASE WHEN taken THEN risky ELSE safe END
			var els Expr
			if g.rng.Intn(3) > 0 {
				els = g.safe(depth)
			}
			e, err = NewCase(nil, []When{{Cond: g.taken(), Then: g.risky()}}, els)
		case 1: // CASE WHEN NOT COALESCE(taken, FALSE) THEN safe ELSE risky END
			cond := must(NewNot(must(NewFunc("coalesce", []Expr{g.taken(), Lit(false, tBool)}))))
			e, err = NewCase(nil, []When{{Cond: cond, Then: g.safe(depth)}}, g.risky())
		case 2: // COALESCE(NULL on safe rows only, risky, safe)
			first := must(NewCase(nil, []When{{Cond: g.taken(), Then: Lit(nil, arrow.Null)}}, sgCol("k")))
			e, err = NewFunc("coalesce", []Expr{first, g.risky(), g.safe(depth)})
		case 3: // a second WHEN decided on hazard rows by the first
			hz := must(NewNot(must(NewFunc("coalesce", []Expr{sgCol("g"), Lit(false, tBool)}))))
			e, err = NewCase(nil, []When{{Cond: hz, Then: g.safe(depth)}, {Cond: sgCol("h"), Then: g.risky()}}, g.risky())
		case 4: // arithmetic over guarded operands
			if depth == 0 {
				continue
			}
			e, err = NewBinary(g.pick("+", "-", "*"), g.guarded(depth-1), g.safe(0))
		default: // CASE over a guarded predicate
			e, err = NewCase(nil, []When{{Cond: g.guardedPred(), Then: g.safe(depth)}}, g.safe(depth))
		}
		if err == nil && isNumeric(e.Type()) {
			return e
		}
	}
}

// guardedPred is a predicate with a failing comparison under AND/OR.
func (g *guardGen) guardedPred() Expr {
	cmp := must(NewBinary(g.pick("<", ">=", "<>"), g.risky(), g.lit("0")))
	t := must(NewFunc("coalesce", []Expr{g.taken(), Lit(false, tBool)}))
	if g.rng.Intn(2) == 0 {
		return must(NewBinary("AND", t, cmp))
	}
	return must(NewBinary("OR", must(NewNot(t)), cmp))
}

func (g *guardGen) pick(xs ...string) string { return xs[g.rng.Intn(len(xs))] }

func TestFusedShortCircuitRandom(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 80
	}
	sizes := []int{1, 7, 1000, 2500, 5000}
	rowsBy, recs := encodeSizes(t, sgSchema, sizes, func(k int) []exec.Row { return sgRows(k, int64(k)*31+5) })
	slice := recs[5000].NewSlice(5, 4999)
	defer slice.Release()
	g := &guardGen{rng: rand.New(rand.NewSource(29))}
	var total FusedStats
	for c := 0; c < n; c++ {
		var e Expr
		if c%3 == 2 {
			e = g.guardedPred()
		} else {
			e = g.guarded(2)
		}
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			mem := newMem(t)
			check := func(rec arrow.RecordBatch, rows []exec.Row) {
				t.Helper()
				want := make([]any, len(rows))
				for i, r := range rows {
					v, err := e.EvalRow(r)
					if err != nil {
						t.Fatalf("%s: the guard did not protect row %d %v: %v", e, i, r, err)
					}
					want[i] = v
				}
				arr, err := e.EvalColumnar(mem, rec)
				if err != nil {
					t.Fatalf("%s: per-node path: %v", e, err)
				}
				checkArray(t, "per-node", e, arr, want)
				arr.Release()
				st := checkFused(t, mem, e, rec, want, nil)
				total.Fused += st.Fused
				total.Fallbacks += st.Fallbacks
			}
			for _, k := range sizes {
				check(recs[k], rowsBy[k])
			}
			check(slice, rowsBy[5000][5:4999])
		})
	}
	// The guarded operands have fused kernels: most batches stay fused.
	if total.Fused < total.Fallbacks*4 {
		t.Errorf("fused %d batches, fell back on %d", total.Fused, total.Fallbacks)
	}
	t.Logf("fused %d batches, %d fell back", total.Fused, total.Fallbacks)
}
