package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Every operator, function and CAST over random columns with NULLs: both
// paths must agree (values, NULLs and errors) at every batch size.
func TestBothPathsAgree(t *testing.T) {
	lit := func(v any, t arrow.DataType) Expr { return Lit(v, t) }
	num := func(s string) Expr { return must(NumberLit(s)) }
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	cast := func(e Expr, to arrow.DataType) Expr { return must(NewCast(e, to)) }
	numeric := []Expr{col("i"), col("price"), col("f"), col("d"), col("g"), col("j"), num("0.908"), num("7"), num("5000000000"), num("2.5e0"), lit(nil, arrow.Null)}
	var cases []Expr
	for _, op := range []string{"+", "-", "*", "/", "%"} {
		for _, l := range numeric {
			for _, r := range numeric {
				if e, err := NewBinary(op, l, r); err == nil {
					cases = append(cases, e)
				}
			}
		}
	}
	for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
		for _, l := range numeric {
			for _, r := range numeric {
				if e, err := NewBinary(op, l, r); err == nil {
					cases = append(cases, e)
				}
			}
		}
		for _, pair := range [][2]Expr{
			{col("s"), col("t")}, {col("s"), lit("banana", tStr)}, {lit("b", tStr), col("s")},
			{col("ts"), col("tu")}, {col("ts"), lit("2015-07-15 00:00:05", tStr)}, {col("day"), lit("2013-11-01", tStr)},
			{col("ts"), col("day")}, {col("b"), col("c")}, {col("b"), lit(true, tBool)}, {col("bin"), col("bin")},
			{col("s"), lit(nil, arrow.Null)}, {col("nul"), col("i")},
			// DECIMALs that fit int64 take cmpDec64; a constant past int64
			// keeps the 128-bit compare.
			{col("d"), num("12345678901234567890.5")}, {num("-12345678901234567890"), col("d")},
			{cast(col("d"), decType(38, 10)), cast(col("price"), decType(38, 10))},
		} {
			cases = append(cases, bin(op, pair[0], pair[1]))
		}
	}
	bools := []Expr{col("b"), col("c"), lit(true, tBool), lit(false, tBool), lit(nil, arrow.Null), bin(">", col("j"), num("0"))}
	for _, op := range []string{"AND", "OR"} {
		for _, l := range bools {
			for _, r := range bools {
				cases = append(cases, bin(op, l, r))
			}
		}
	}
	// Short-circuit: the right side fails only where the left decides.
	cases = append(cases,
		bin("AND", bin("<>", col("j"), num("0")), bin(">", bin("/", col("i"), col("j")), num("1"))),
		bin("OR", bin("=", col("j"), num("0")), bin(">", bin("/", col("i"), col("j")), num("1"))),
	)
	for _, e := range []Expr{col("b"), bin("<", col("i"), col("j")), lit(nil, arrow.Null)} {
		cases = append(cases, must(NewNot(e)))
	}
	for _, e := range []Expr{col("i"), col("s"), col("nul"), col("b"), lit(nil, arrow.Null), lit(int32(1), tInt)} {
		cases = append(cases, NewIsNull(e, false), NewIsNull(e, true))
	}
	for _, e := range []Expr{col("i"), col("price"), col("f"), col("d"), col("g"), col("nul")} {
		cases = append(cases, must(NewNeg(e)), fn("abs", e))
	}
	for _, neg := range []bool{false, true} {
		cases = append(cases,
			must(NewIn(col("j"), []Expr{num("1"), num("-2")}, neg)),
			must(NewIn(col("j"), []Expr{num("1"), lit(nil, arrow.Null)}, neg)),
			must(NewIn(col("s"), []Expr{lit("a", tStr), lit("abc", tStr), lit("日本語テキスト", tStr)}, neg)),
			must(NewIn(col("price"), []Expr{num("5"), col("i")}, neg)),
			must(NewIn(col("f"), []Expr{num("1.5"), num("3")}, neg)),
			must(NewIn(col("d"), []Expr{num("1.5"), num("3"), col("j")}, neg)),
			must(NewIn(col("i"), []Expr{col("j"), lit(nil, arrow.Null)}, neg)),
			must(NewIn(col("ts"), []Expr{lit("2015-07-15 00:00:05", tStr)}, neg)),
			must(NewBetween(col("i"), num("-100"), num("100"), neg)),
			must(NewBetween(col("d"), col("j"), num("2500.5"), neg)),
			must(NewBetween(col("s"), lit("a", tStr), lit("b", tStr), neg)),
		)
		for _, p := range append(pats, "%a%b%c%", "_b%", "%_", "%%", "_%_") {
			cases = append(cases, must(NewLike(col("s"), lit(p, tStr), neg)))
		}
		cases = append(cases, must(NewLike(col("s"), col("t"), neg)), must(NewLike(lit("abc", tStr), col("t"), neg)))
	}
	cases = append(cases,
		must(NewCase(nil, []When{{bin(">", col("i"), num("0")), col("price")}, {col("b"), col("j")}}, nil)),
		must(NewCase(nil, []When{{bin(">", col("i"), num("0")), col("d")}}, col("f"))),
		must(NewCase(nil, []When{{col("b"), col("s")}, {col("c"), lit("c", tStr)}}, lit("else", tStr))),
		must(NewCase(col("j"), []When{{num("1"), lit("one", tStr)}, {num("2"), lit("two", tStr)}}, col("s"))),
		must(NewCase(nil, []When{{col("b"), col("ts")}}, col("day"))),
		must(NewCase(nil, []When{{col("b"), col("c")}}, lit(nil, arrow.Null))),
		must(NewCase(nil, []When{{col("b"), col("bin")}}, nil)),
		// The ELSE arm divides by zero only where the WHEN arm is taken.
		must(NewCase(nil, []When{{bin("=", col("j"), num("0")), num("0")}}, bin("/", col("i"), col("j")))),
		fn("coalesce", col("nul"), col("i"), col("j")),
		fn("coalesce", col("s"), col("t"), lit("none", tStr)),
		fn("coalesce", col("d"), col("price")),
		fn("coalesce", col("nul"), lit(nil, arrow.Null)),
		fn("lower", col("s")), fn("upper", col("s")), fn("LOWER", col("t")),
		fn("length", col("s")), fn("char_length", col("t")),
		fn("substring", col("s"), num("2")), fn("substr", col("s"), num("0"), num("3")),
		fn("substring", col("s"), col("j"), num("2")), fn("substring", col("s"), num("-1"), col("j")),
		fn("concat", col("s"), lit("-", tStr), col("t")), fn("concat", col("s"), col("i")),
		fn("mod", col("i"), col("j")), fn("mod", col("price"), num("7")),
	)
	// CAST: every pair among the supported types.
	types := []arrow.DataType{tInt, tBig, tF32, tF64, tDec, decType(3, 1), decType(38, 10), tStr, tBool, tTsMs, tTsUs,
		&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Nanosecond}, tDate, tBin}
	for _, src := range []string{"i", "price", "f", "d", "s", "b", "ts", "day", "nul", "g", "tu", "bin", "j", "t"} {
		for _, to := range types {
			if e, err := NewCast(col(src), to); err == nil {
				cases = append(cases, e)
			}
		}
	}
	cases = append(cases, cast(cast(col("ts"), tStr), tTsMs), cast(cast(col("d"), tStr), tDec), cast(cast(col("f"), tStr), tF64))
	for _, e := range cases {
		t.Run(e.String(), func(t *testing.T) { checkAgree(t, e) })
	}
	if len(cases) < 500 {
		t.Fatalf("only %d cases", len(cases))
	}
}
