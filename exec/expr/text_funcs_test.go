package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Expected values are the examples of PostgreSQL's string and math
// function tables (postgresql.org/docs/current/functions-string.html,
// functions-math.html) and DuckDB's text and numeric function pages, run
// through a column so both paths are checked, with NULLs.
func TestStringAndMathFunctionValues(t *testing.T) {
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	s := func(v string) Expr { return Lit(v, tStr) }
	num := func(v string) Expr { return must(NumberLit(v)) }
	sc := col("s")
	cases := []struct {
		e    Expr
		in   vals
		want any
	}{
		// position('om' in 'Thomas') = 3; strpos('high', 'ig') = 2
		{fn("position", s("om"), sc), vals{"s": "Thomas"}, int64(3)},
		{fn("strpos", sc, s("ig")), vals{"s": "high"}, int64(2)},
		{fn("instr", sc, s("x")), vals{"s": "high"}, int64(0)},
		{fn("strpos", sc, s("テ")), vals{"s": "日本語テキスト"}, int64(4)},
		{fn("position", s(""), sc), vals{"s": "abc"}, int64(1)},
		{fn("position", s("a"), sc), vals{}, nil},
		// left('abcde', 2) = ab; left('abcde', -2) = abc; right('abcde', 2) = de; right('abcde', -2) = cde
		{fn("left", sc, num("2")), vals{"s": "abcde"}, "ab"},
		{fn("left", sc, num("-2")), vals{"s": "abcde"}, "abc"},
		{fn("right", sc, num("2")), vals{"s": "abcde"}, "de"},
		{fn("right", sc, num("-2")), vals{"s": "abcde"}, "cde"},
		{fn("left", sc, num("10")), vals{"s": "ÄÖÜ"}, "ÄÖÜ"},
		{fn("right", sc, col("j")), vals{"s": "ÄÖÜ"}, nil},
		// lpad('hi', 5, 'xy') = xyxhi; rpad('hi', 5, 'xy') = hixyx; lpad('hello', 2) = he
		{fn("lpad", sc, num("5"), s("xy")), vals{"s": "hi"}, "xyxhi"},
		{fn("rpad", sc, num("5"), s("xy")), vals{"s": "hi"}, "hixyx"},
		{fn("lpad", sc, num("2")), vals{"s": "hello"}, "he"},
		{fn("rpad", sc, num("4")), vals{"s": "ab"}, "ab  "},
		{fn("lpad", sc, num("-1")), vals{"s": "ab"}, ""},
		// reverse('abcde') = edcba; repeat('Pg', 4) = PgPgPgPg
		{fn("reverse", sc), vals{"s": "abcdé"}, "édcba"},
		{fn("repeat", sc, num("4")), vals{"s": "Pg"}, "PgPgPgPg"},
		{fn("repeat", sc, num("-1")), vals{"s": "Pg"}, ""},
		// starts_with('alphabet', 'alph') = t; DuckDB suffix / ends_with, contains
		{fn("starts_with", sc, s("alph")), vals{"s": "alphabet"}, true},
		{fn("ends_with", sc, s("bet")), vals{"s": "alphabet"}, true},
		{fn("suffix", sc, s("alph")), vals{"s": "alphabet"}, false},
		{fn("contains", sc, s("hab")), vals{"s": "alphabet"}, true},
		{fn("contains", sc, s("x")), vals{}, nil},
		// DuckDB: strlen('🦆') = 4, length('🦆') = 1
		{fn("strlen", sc), vals{"s": "🦆"}, int64(4)},
		{fn("length", sc), vals{"s": "🦆"}, int32(1)},
		// concat_ws(',', 'abcde', 2, NULL, 22) = abcde,2,22
		{fn("concat_ws", s(","), sc, num("2"), col("t"), num("22")), vals{"s": "abcde"}, "abcde,2,22"},
		{fn("concat_ws", col("t"), sc, s("x")), vals{"s": "a"}, nil},
		{fn("concat_ws", s("-"), col("t")), vals{}, ""},
		// regexp_replace('Thomas', '.[mN]a.', 'M') = ThM; with 'g' every match;
		// regexp_replace('foobarbaz', 'b(..)', 'X\1Y', 'g') = fooXarYXazY
		{fn("regexp_replace", sc, s(".[mN]a."), s("M")), vals{"s": "Thomas"}, "ThM"},
		{fn("regexp_replace", sc, s("b(..)"), s(`X\1Y`), s("g")), vals{"s": "foobarbaz"}, "fooXarYXazY"},
		{fn("regexp_replace", sc, s("b(..)"), s(`X\1Y`)), vals{"s": "foobarbaz"}, "fooXarYbaz"},
		{fn("regexp_replace", sc, s("A"), s("$"), s("gi")), vals{"s": "banana"}, "b$n$n$"},
		{fn("regexp_replace", sc, col("t"), s("-")), vals{"s": "abc", "t": "b"}, "a-c"},
		// DuckDB: regexp_matches('anabanana', '(an)*') = true
		{fn("regexp_matches", sc, s("(an)*")), vals{"s": "anabanana"}, true},
		{fn("regexp_matches", sc, s("^x")), vals{"s": "anabanana"}, false},
		{fn("regexp_matches", sc, s("NA"), s("i")), vals{"s": "anabanana"}, true},
		{fn("regexp_matches", sc, s("a")), vals{}, nil},
		// Math: sqrt(2) = 1.4142135623730951; exp(1.0) = e; ln(2.0); log10(100) = 2;
		// log(2, 64) = 6; sign(-8.4) = -1; pi(); trunc(42.8) = 42; trunc(-42.8) = -42;
		// trunc(42.4382, 2) = 42.43
		{fn("sqrt", col("f")), vals{"f": 2.0}, math.Sqrt2},
		{fn("exp", col("f")), vals{"f": 1.0}, math.E},
		{fn("ln", col("f")), vals{"f": 2.0}, math.Ln2},
		{fn("log10", col("i")), vals{"i": int32(100)}, 2.0},
		{fn("log", col("i")), vals{"i": int32(1000)}, 3.0},
		{fn("log", num("2"), col("i")), vals{"i": int32(64)}, 6.0},
		{fn("sign", col("d")), vals{"d": dec("-8.40", 10, 2)}, int32(-1)},
		{fn("sign", col("f")), vals{"f": 0.0}, int32(0)},
		{fn("sign", col("price")), vals{"price": int64(7)}, int32(1)},
		{fn("trunc", col("f")), vals{"f": 42.8}, 42.0},
		{fn("trunc", col("f")), vals{"f": -42.8}, -42.0},
		{fn("trunc", col("f"), num("2")), vals{"f": 42.4382}, 42.43},
		{fn("trunc", col("f"), num("2")), vals{"f": -2.675}, -2.67},
		{fn("trunc", col("d"), num("1")), vals{"d": dec("-12.39", 10, 2)}, dec("-12.30", 10, 2)},
		{fn("trunc", col("i"), num("-1")), vals{"i": int32(-129)}, int32(-120)},
		{fn("ceiling", col("f")), vals{"f": -42.8}, -42.0},
		{fn("floor", col("f")), vals{"f": -42.8}, -43.0},
		{fn("round", col("f"), num("2")), vals{"f": 42.4382}, 42.44},
		{fn("sqrt", col("f")), vals{}, nil},
		// typeof is a constant name.
		{fn("typeof", col("d")), vals{}, "DECIMAL(10, 2)"},
		// TRY_CAST: NULL instead of an error.
		{must(NewTryCast(sc, tInt)), vals{"s": "abc"}, nil},
		{must(NewTryCast(sc, tInt)), vals{"s": " 42 "}, int32(42)},
		{must(NewTryCast(col("price"), tInt)), vals{"price": int64(3000000000)}, nil},
		// Division by zero is NULL (SQLite, DuckDB), integer division truncates.
		{must(NewBinary("/", col("i"), col("j"))), vals{"i": int32(7), "j": int32(0)}, nil},
		{must(NewBinary("%", col("i"), col("j"))), vals{"i": int32(7), "j": int32(0)}, nil},
		{must(NewBinary("/", col("f"), num("0"))), vals{"f": 1.0}, nil},
		{must(NewBinary("/", col("d"), col("j"))), vals{"d": dec("1", 10, 2), "j": int32(0)}, nil},
		{must(NewBinary("/", col("i"), col("j"))), vals{"i": int32(-7), "j": int32(2)}, int32(-3)},
		{fn("mod", col("i"), col("j")), vals{"i": int32(-7), "j": int32(0)}, nil},
		// || casts a non-string operand: 1 + 2 || 'c' = '3c'.
		{must(NewBinary("||", must(NewBinary("+", num("1"), col("i"))), s("c"))), vals{"i": int32(2)}, "3c"},
		{must(NewBinary("||", sc, col("t"))), vals{"s": "a"}, nil},
		{must(NewBinary("||", col("day"), s("!"))), vals{"day": d("2024-01-31")}, "2024-01-31!"},
	}
	for _, c := range cases {
		t.Run(c.e.String(), func(t *testing.T) {
			got, err := one(t, c.e, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := c.want.(float64); ok {
				if g, ok := got.(float64); !ok || math.Abs(g-f) > 1e-12*math.Max(1, math.Abs(f)) {
					t.Fatalf("got %#v, want %v", got, f)
				}
				return
			}
			if !sameValue(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
	for _, c := range []struct {
		e    Expr
		in   vals
		want string
	}{
		{fn("sqrt", col("f")), vals{"f": -1.0}, "square root of the negative number"},
		{fn("ln", col("f")), vals{"f": 0.0}, "logarithm of 0.0"},
		{fn("repeat", sc, num("2000000000")), vals{"s": "ab"}, "would exceed"},
	} {
		if _, err := one(t, c.e, c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.e, err, c.want)
		}
	}
	if _, err := NewFunc("regexp_replace", []Expr{sc, s("("), s("x")}); err == nil || !strings.Contains(err.Error(), "invalid regular expression") {
		t.Errorf("a bad constant pattern is a planning error: %v", err)
	}
	if v, err := must(NewBinary("/", num("1"), num("0"))).EvalRow(nil); err != nil || v != nil {
		t.Errorf("1 / 0 folds to NULL: %v, %v", v, err)
	}
	if _, err := NewTryCast(col("day"), tInt); err == nil {
		t.Error("TRY_CAST of an impossible type pair is still a planning error")
	}
}

// random() is a fresh value per row on both paths, in [0, 1).
func TestRandom(t *testing.T) {
	e := must(NewFunc("random", nil))
	mem := newMem(t)
	rec := mkRecord(t, mem, cachedRows(1000))
	defer rec.Release()
	arr, err := e.EvalColumnar(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	seen := map[float64]bool{}
	for i := 0; i < arr.Len(); i++ {
		v := arr.(interface{ Value(int) float64 }).Value(i)
		if v < 0 || v >= 1 {
			t.Fatalf("random() = %v", v)
		}
		seen[v] = true
	}
	if len(seen) < 990 {
		t.Errorf("only %d distinct values in 1000 rows", len(seen))
	}
	if _, ok := e.(*Literal); ok {
		t.Error("random() must not fold to a constant")
	}
	_ = arrow.Null
}
