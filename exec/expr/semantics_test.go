package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

type vals = map[string]any

// Expected values, each also evaluated by both paths through one().
func TestExpectedValues(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	cast := func(e Expr, to arrow.DataType) Expr { return must(NewCast(e, to)) }
	s := func(v string) Expr { return Lit(v, tStr) }
	ts := func(v string) arrow.Timestamp { x, _ := parseTimestamp(v, arrow.Millisecond); return x }
	cases := []struct {
		e    Expr
		in   vals
		want any
	}{
		{bin("+", col("i"), col("j")), vals{"i": int32(5), "j": int32(-7)}, int32(-2)},
		{bin("*", col("price"), num("0.908")), vals{"price": int64(1000)}, dec("908.000", 22, 3)},
		{bin("+", col("d"), num("1")), vals{"d": dec("1.25", 10, 2)}, dec("2.25", 14, 2)},
		{bin("/", col("d"), num("3")), vals{"d": dec("1.00", 10, 2)}, dec("0.3333333333333", 21, 13)},
		{bin("/", col("d"), num("3.0")), vals{"d": dec("2.00", 10, 2)}, dec("0.666667", 15, 6)},
		{bin("/", col("i"), num("2")), vals{"i": int32(-7)}, int32(-3)},
		{bin("%", col("i"), num("3")), vals{"i": int32(-7)}, int32(-1)},
		{bin("%", col("f"), num("3")), vals{"f": -7.5}, -1.5},
		{bin("%", col("d"), num("0.3")), vals{"d": dec("-1.00", 10, 2)}, dec("-0.10", 3, 2)},
		{bin("/", col("f"), num("0")), vals{"f": 1.0}, nil}, // x / 0 is NULL (SQLite, DuckDB)
		{bin("+", col("i"), col("f")), vals{"i": int32(1), "f": 0.5}, 1.5},
		{bin("+", col("i"), col("nul")), vals{"i": int32(1)}, nil},
		{bin("=", col("i"), num("1.0")), vals{"i": int32(1)}, true},
		{bin("<", col("d"), col("f")), vals{"d": dec("1.50", 10, 2), "f": 1.51}, true},
		{bin("=", col("ts"), s("2015-07-15 00:00:05")), vals{"ts": ts("2015-07-15 00:00:05")}, true},
		{bin("<", col("ts"), col("tu")), vals{"ts": arrow.Timestamp(1000), "tu": arrow.Timestamp(1000001)}, true},
		{bin("=", col("ts"), col("tu")), vals{"ts": arrow.Timestamp(1000), "tu": arrow.Timestamp(1000000)}, true},
		{bin(">=", col("day"), s("2015-07-15")), vals{"day": arrow.Date32(16631)}, true},
		{bin("<", col("s"), col("t")), vals{"s": "Z", "t": "a"}, true},
		{bin("=", col("f"), col("f")), vals{"f": math.NaN()}, false},
		{must(NewIn(col("j"), []Expr{num("1"), Lit(nil, arrow.Null)}, false)), vals{"j": int32(2)}, nil},
		{must(NewIn(col("j"), []Expr{num("1"), Lit(nil, arrow.Null)}, false)), vals{"j": int32(1)}, true},
		{must(NewIn(col("j"), []Expr{num("1"), Lit(nil, arrow.Null)}, true)), vals{"j": int32(2)}, nil},
		{must(NewIn(col("j"), []Expr{num("1"), num("3")}, true)), vals{"j": int32(2)}, true},
		{must(NewBetween(col("i"), num("1"), num("3"), false)), vals{"i": int32(3)}, true},
		{must(NewBetween(col("i"), num("1"), col("nul"), false)), vals{"i": int32(0)}, false},
		{must(NewBetween(col("i"), num("1"), col("nul"), true)), vals{"i": int32(2)}, nil},
		{must(NewCase(nil, []When{{bin(">", col("i"), num("0")), s("pos")}}, s("other"))), vals{"i": int32(-1)}, "other"},
		{must(NewCase(col("j"), []When{{num("1"), num("10")}, {num("2"), num("20.5")}}, nil)), vals{"j": int32(1)}, dec("10.0", 3, 1)},
		{must(NewCase(nil, []When{{Lit(nil, arrow.Null), num("1")}, {col("b"), num("2")}}, nil)), vals{}, nil},
		{fn("coalesce", col("nul"), col("i"), num("7")), vals{}, int32(7)},
		{fn("lower", col("s")), vals{"s": "ÄBC Straße"}, "äbc straße"},
		{fn("upper", col("s")), vals{"s": "abc"}, "ABC"},
		{fn("length", col("s")), vals{"s": "日本語"}, int32(3)},
		{fn("substring", col("s"), num("2"), num("3")), vals{"s": "日本語テキスト"}, "本語テ"},
		{fn("substring", col("s"), num("0"), num("2")), vals{"s": "hello"}, "h"},
		{fn("substring", col("s"), num("-3"), num("2")), vals{"s": "hello"}, ""},
		{fn("substring", col("s"), num("4")), vals{"s": "hello"}, "lo"},
		{fn("substring", col("s"), num("9")), vals{"s": "hello"}, ""},
		{fn("concat", col("s"), s("-"), col("t")), vals{"s": "a", "t": "b"}, "a-b"},
		{fn("concat", col("s"), col("t")), vals{"s": "a"}, nil},
		{fn("mod", col("i"), num("-3")), vals{"i": int32(7)}, int32(1)},
		{fn("abs", col("d")), vals{"d": dec("-1.50", 10, 2)}, dec("1.50", 10, 2)},
		{must(NewNeg(col("price"))), vals{"price": int64(5)}, int64(-5)},
		{NewIsNull(col("nul"), false), vals{}, true},
		{NewIsNull(col("i"), true), vals{"i": int32(0)}, true},
		{cast(col("f"), tInt), vals{"f": -2.9}, int32(-2)},
		{cast(col("d"), tInt), vals{"d": dec("-2.99", 10, 2)}, int32(-2)},
		{cast(col("d"), decType(10, 1)), vals{"d": dec("2.25", 10, 2)}, dec("2.3", 10, 1)},
		{cast(col("d"), decType(10, 1)), vals{"d": dec("-2.25", 10, 2)}, dec("-2.3", 10, 1)},
		{cast(col("f"), decType(5, 2)), vals{"f": 0.125}, dec("0.13", 5, 2)},
		{cast(col("s"), tInt), vals{"s": " 42 "}, int32(42)},
		{cast(col("s"), tDec), vals{"s": "12.345"}, dec("12.35", 10, 2)},
		{cast(col("s"), tTsMs), vals{"s": "2015-07-15T00:00:05.123456Z"}, ts("2015-07-15 00:00:05.123")},
		{cast(col("s"), tDate), vals{"s": "2016-02-29"}, arrow.Date32(16860)},
		{cast(col("s"), tBool), vals{"s": "TRUE"}, true},
		{cast(col("ts"), tStr), vals{"ts": ts("2015-07-15 00:00:05")}, "2015-07-15 00:00:05"},
		{cast(col("ts"), tStr), vals{"ts": ts("2015-07-15 00:00:05.120")}, "2015-07-15 00:00:05.12"},
		{cast(col("ts"), tDate), vals{"ts": arrow.Timestamp(-1)}, arrow.Date32(-1)},
		{cast(col("day"), tTsMs), vals{"day": arrow.Date32(1)}, arrow.Timestamp(86400000)},
		{cast(col("tu"), tTsMs), vals{"tu": arrow.Timestamp(-1)}, arrow.Timestamp(-1)},
		{cast(col("d"), tStr), vals{"d": dec("-0.05", 10, 2)}, "-0.05"},
		{cast(col("f"), tStr), vals{"f": 3.0}, "3.0"},
		{cast(col("f"), tStr), vals{"f": 1e7}, "10000000.0"}, // DuckDB: SELECT 1e7::VARCHAR
		{cast(col("b"), tStr), vals{"b": true}, "true"},
		{cast(col("i"), tBool), vals{"i": int32(-3)}, true},
	}
	for _, c := range cases {
		t.Run(c.e.String(), func(t *testing.T) {
			got, err := one(t, c.e, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(got, c.want) {
				t.Fatalf("got %#v (%s), want %#v (%s)", got, FormatValue(got, c.e.Type()), c.want, FormatValue(c.want, c.e.Type()))
			}
		})
	}
}

func TestResultTypes(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{must(NewBinary("+", col("i"), col("j"))), "INT"},
		{must(NewBinary("+", col("i"), col("price"))), "BIGINT"},
		{must(NewBinary("*", col("price"), num("0.908"))), "DECIMAL(22, 3)"},
		{must(NewBinary("+", col("d"), col("i"))), "DECIMAL(13, 2)"},
		{must(NewBinary("/", col("d"), col("i"))), "DECIMAL(21, 13)"},
		{must(NewBinary("*", col("g"), col("i"))), "DOUBLE"},
		{must(NewBinary("+", col("d"), col("f"))), "DOUBLE"},
		{must(NumberLit("0.908")), "DECIMAL(3, 3)"},
		{must(NumberLit("12.50")), "DECIMAL(4, 2)"},
		{must(NumberLit("2147483648")), "BIGINT"},
		{must(NumberLit("1e3")), "DOUBLE"},
		{must(NumberLit("99999999999999999999")), "DECIMAL(20, 0)"},
	} {
		if got := typeName(c.e.Type()); got != c.want {
			t.Errorf("%s: type %s, want %s", c.e, got, c.want)
		}
	}
}

// Three-valued logic truth tables over columns b and c (and NOT).
func TestThreeValuedLogic(t *testing.T) {
	tv := []any{true, false, nil}
	and := map[[2]any]any{}
	or := map[[2]any]any{}
	for _, x := range tv {
		for _, y := range tv {
			switch {
			case x == false || y == false:
				and[[2]any{x, y}] = false
			case x == nil || y == nil:
				and[[2]any{x, y}] = nil
			default:
				and[[2]any{x, y}] = true
			}
			switch {
			case x == true || y == true:
				or[[2]any{x, y}] = true
			case x == nil || y == nil:
				or[[2]any{x, y}] = nil
			default:
				or[[2]any{x, y}] = false
			}
		}
	}
	andE := must(NewBinary("AND", col("b"), col("c")))
	orE := must(NewBinary("or", col("b"), col("c")))
	notE := must(NewNot(col("b")))
	for k, want := range and {
		if got, _ := one(t, andE, vals{"b": k[0], "c": k[1]}); got != want {
			t.Errorf("%v AND %v = %v, want %v", k[0], k[1], got, want)
		}
		if got, _ := one(t, orE, vals{"b": k[0], "c": k[1]}); got != or[k] {
			t.Errorf("%v OR %v = %v, want %v", k[0], k[1], got, or[k])
		}
	}
	for x, want := range map[any]any{true: false, false: true, nil: nil} {
		if got, _ := one(t, notE, vals{"b": x}); got != want {
			t.Errorf("NOT %v = %v, want %v", x, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	runtime := []struct {
		e    Expr
		in   vals
		want string
	}{
		{bin("+", col("price"), num("1")), vals{"price": int64(math.MaxInt64)}, "BIGINT overflow in (price + 1)"},
		{bin("*", col("i"), col("i")), vals{"i": int32(100000)}, "INT overflow in (i * i)"},
		{bin("-", col("i"), num("1")), vals{"i": int32(math.MinInt32)}, "INT overflow"},
		{bin("/", col("price"), num("-1")), vals{"price": int64(math.MinInt64)}, "BIGINT overflow"},
		{must(NewNeg(col("i"))), vals{"i": int32(math.MinInt32)}, "INT overflow"},
		{must(NewFunc("abs", []Expr{col("price")})), vals{"price": int64(math.MinInt64)}, "BIGINT overflow"},
		{must(NewCast(col("s"), tInt)), vals{"s": "abc"}, "CAST('abc' AS INT): invalid INT value"},
		{must(NewCast(col("price"), tInt)), vals{"price": int64(3000000000)}, "CAST(3000000000 AS INT): value out of range for INT"},
		{must(NewCast(col("f"), tBig)), vals{"f": 1e300}, "value out of range for BIGINT"},
		{must(NewCast(col("f"), tF32)), vals{"f": 1e300}, "value out of range for FLOAT"},
		{must(NewCast(col("d"), decType(3, 2))), vals{"d": dec("12.00", 10, 2)}, "value out of range for DECIMAL(3, 2)"},
		{must(NewCast(col("s"), tTsMs)), vals{"s": "2015-13-01 00:00:00"}, "invalid TIMESTAMP(3) value"},
		{must(NewCast(col("s"), tDate)), vals{"s": "2015-02-29"}, "invalid DATE value"},
		{must(NewFunc("substring", []Expr{col("s"), num("1"), col("j")})), vals{"s": "x", "j": int32(-1)}, "negative length"},
	}
	for _, c := range runtime {
		t.Run(c.e.String(), func(t *testing.T) {
			_, err := one(t, c.e, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	bind := []struct {
		build func() (Expr, error)
		want  string
	}{
		{func() (Expr, error) { return NewBinary("+", col("s"), col("i")) }, "cannot apply '+' to VARCHAR and INT"},
		{func() (Expr, error) { return NewBinary("=", col("b"), col("i")) }, "cannot apply '=' to BOOLEAN and INT"},
		{func() (Expr, error) { return NewBinary("AND", col("b"), col("i")) }, "cannot apply 'AND' to BOOLEAN and INT"},
		{func() (Expr, error) { return NewCast(Lit("abc", tStr), tInt) }, "CAST('abc' AS INT)"},
		{func() (Expr, error) { return NewCast(col("day"), tInt) }, "cannot cast DATE to INT"},
		{func() (Expr, error) { return NewLike(col("s"), Lit("ab\\", tStr), false) }, "ends with the escape"},
		{func() (Expr, error) { return NewFunc("nope", nil) }, "unknown function nope"},
		{func() (Expr, error) { return NewFunc("lower", []Expr{col("i")}) }, "lower(INT): no signature matches; accepted: lower(VARCHAR) -> VARCHAR"},
		{func() (Expr, error) { return NewNot(col("i")) }, "cannot apply NOT to INT"},
		{func() (Expr, error) { return NewCase(nil, []When{{col("b"), col("s")}}, col("i")) }, "incompatible types VARCHAR and INT"},
		{func() (Expr, error) { return NewIn(col("b"), []Expr{col("i")}, false) }, "IN: cannot compare"},
		{func() (Expr, error) { return NumberLit("12a") }, "invalid numeric literal"},
	}
	for _, c := range bind {
		_, err := c.build()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

func TestLikePatterns(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"", "", true}, {"", "%", true}, {"a", "", false}, {"abc", "%", true},
		{"abc", "a%", true}, {"abc", "%c", true}, {"abc", "%b%", true}, {"abc", "a_c", true},
		{"abc", "_", false}, {"日", "_", true}, {"日本", "_", false}, {"日本", "__", true},
		{"x%y", "x\\%y", true}, {"xzy", "x\\%y", false}, {"a_b", "a\\_b", true}, {"axb", "a\\_b", false},
		{"back\\slash", "back\\\\slash", true}, {"abcabc", "%abc", true}, {"abcab", "a%b%c", false},
		{"abXbc", "a%bc", true}, {"mississippi", "%iss%ipp%", true}, {"mississippi", "m%s_s%i", true},
		{"straße", "%ß%", true}, {"ABC", "abc", false}, {"abc", "a%%c", true}, {"ac", "a%_c", false},
	} {
		e := must(NewLike(col("s"), Lit(c.p, tStr), false))
		got, err := one(t, e, vals{"s": c.s})
		if err != nil || got != c.want {
			t.Errorf("'%s' LIKE '%s' = %v (%v), want %v", c.s, c.p, got, err, c.want)
		}
		ne := must(NewLike(col("s"), col("t"), true)) // non-constant pattern
		got, err = one(t, ne, vals{"s": c.s, "t": c.p})
		if err != nil || got != !c.want {
			t.Errorf("'%s' NOT LIKE '%s' = %v (%v), want %v", c.s, c.p, got, err, !c.want)
		}
	}
}

func TestStringAndFormat(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{must(NewBinary("*", col("price"), num("0.908"))), "(price * 0.908)"},
		{must(NewFunc("LOWER", []Expr{col("s")})), "lower(s)"},
		{must(NewCast(col("i"), tBig)), "CAST(i AS BIGINT)"},
		{must(NewBinary("=", col("ts"), Lit("2015-07-15 00:00:05", tStr))), "(ts = TIMESTAMP '2015-07-15 00:00:05')"},
		{must(NewIn(col("s"), []Expr{Lit("a'b", tStr)}, true)), "(s NOT IN ('a''b'))"},
		{must(NewBetween(col("i"), num("1"), num("2"), false)), "(i BETWEEN 1 AND 2)"},
		{must(NewCase(col("j"), []When{{num("1"), Lit("x", tStr)}}, nil)), "CASE j WHEN 1 THEN 'x' END"},
		{NewIsNull(col("s"), true), "(s IS NOT NULL)"},
		{must(NewFunc("mod", []Expr{col("i"), num("2")})), "mod(i, 2)"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
	}
	for _, c := range []struct {
		v    any
		t    arrow.DataType
		want string
	}{
		{nil, tInt, "NULL"},
		{decimal128.FromI64(5), tDec, "0.05"},
		{decimal128.FromI64(-12345), tDec, "-123.45"},
		{0.1, tF64, "0.1"}, {1e-5, tF64, "1e-05"}, {math.Copysign(0, -1), tF64, "-0.0"}, {math.NaN(), tF64, "nan"},
		{float32(0.1), tF32, "0.1"}, {123456789.0, tF64, "123456789.0"},
		{arrow.Timestamp(1436918405000), tTsMs, "2015-07-15 00:00:05"},
		{arrow.Timestamp(1436918405001), tTsMs, "2015-07-15 00:00:05.001"},
		{arrow.Timestamp(-1), tTsUs, "1969-12-31 23:59:59.999999"},
		{arrow.Date32(0), tDate, "1970-01-01"},
		{[]byte("hi"), tBin, `\x6869`},
		{true, tBool, "true"},
	} {
		if got := FormatValue(c.v, c.t); got != c.want {
			t.Errorf("FormatValue(%v, %s) = %s, want %s", c.v, c.t, got, c.want)
		}
	}
}

func TestCommonTypeAndCoerce(t *testing.T) {
	for _, c := range []struct {
		a, b arrow.DataType
		want string
	}{
		{tInt, tBig, "BIGINT"}, {tInt, tDec, "DECIMAL(12, 2)"}, {tBig, tDec, "DECIMAL(21, 2)"},
		{tDec, tF32, "DOUBLE"}, {tF32, tF32, "FLOAT"}, {tTsMs, tTsUs, "TIMESTAMP(6)"},
		{tDate, tTsMs, "TIMESTAMP(3)"}, {tStr, tTsMs, "TIMESTAMP(3)"}, {arrow.Null, tStr, "VARCHAR"},
	} {
		got, err := CommonType(c.a, c.b)
		if err != nil || typeName(got) != c.want {
			t.Errorf("CommonType(%s, %s) = %v, %v; want %s", typeName(c.a), typeName(c.b), got, err, c.want)
		}
	}
	if _, err := CommonType(tStr, tInt); err == nil {
		t.Error("CommonType(VARCHAR, INT) should fail")
	}
	c := col("i")
	if e, _ := Coerce(c, tInt); e != Expr(c) {
		t.Error("Coerce to the same type must return the expression unchanged")
	}
	e, err := Coerce(c, tBig)
	if err != nil || e.String() != "i" || e.Type().ID() != arrow.INT64 {
		t.Errorf("Coerce(i, BIGINT) = %v, %v", e, err)
	}
}

func TestEvalPredicateAndSelection(t *testing.T) {
	mem := newMem(t)
	rows := cachedRows(1000)
	rec := mkRecord(t, mem, rows)
	defer rec.Release()
	e := must(NewBinary(">", col("price"), must(NumberLit("5000000"))))
	pred, err := EvalPredicate(mem, e, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer pred.Release()
	sel := SelectionVector(pred, make([]int32, 0, 8))
	var want []int32
	for i, r := range rows {
		if v, _ := e.EvalRow(r); v == true {
			want = append(want, int32(i))
		}
	}
	if len(sel) != len(want) || len(want) == 0 {
		t.Fatalf("selected %d rows, want %d", len(sel), len(want))
	}
	for i := range want {
		if sel[i] != want[i] {
			t.Fatalf("sel[%d] = %d, want %d", i, sel[i], want[i])
		}
	}
	if _, err := EvalPredicate(mem, col("i"), rec); err == nil {
		t.Fatal("an INT predicate must be refused")
	}
	np, err := EvalPredicate(mem, Lit(nil, arrow.Null), rec)
	if err != nil {
		t.Fatal(err)
	}
	defer np.Release()
	if len(SelectionVector(np, nil)) != 0 || np.NullN() != 1000 {
		t.Fatal("WHERE NULL selects nothing")
	}
}
