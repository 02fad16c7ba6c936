package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func iv(v, unit string) Expr {
	return must(NewFunc("__clink_interval", []Expr{Lit(v, tStr), Lit(unit, tStr)}))
}

// familyCases are calls of every registered function family, over the
// shared test columns (with NULLs).
func familyCases() map[string][]Expr {
	num := func(s string) Expr { return must(NumberLit(s)) }
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	s := func(v string) Expr { return Lit(v, tStr) }
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	return map[string][]Expr{
		"string": {
			fn("trim", col("s")), fn("ltrim", col("s")), fn("rtrim", col("s")), fn("trim", col("s"), s("a")),
			fn("trim", col("s"), col("t")), fn("replace", col("s"), s("a"), s("-")), fn("replace", col("s"), col("t"), s("")),
			fn("split_index", col("s"), s("a"), num("0")), fn("split_index", col("s"), s("a"), col("j")),
			fn("split_index", col("s"), s(""), num("1")), fn("split_index", col("s"), col("t"), num("1")),
			fn("regexp_extract", col("s"), s("([a-z])([a-z]*)"), num("2")), fn("regexp_extract", col("s"), s("b(x)?")),
			fn("regexp_extract", col("s"), s("[0-9]+"), col("j")), fn("regexp_extract", col("s"), col("t")),
			fn("count_char", col("s"), s("a")), fn("lower", col("s")), fn("substring", col("s"), num("2")),
			fn("concat", col("s"), col("i")), fn("char_length", col("s")),
		},
		"math": {
			fn("round", col("d")), fn("round", col("d"), num("1")), fn("round", col("d"), num("-2")), fn("round", col("d"), num("5")),
			fn("round", col("f"), num("2")), fn("round", col("f")), fn("round", col("g"), num("1")), fn("round", col("i"), num("-1")),
			fn("round", col("price"), num("-3")), fn("round", col("i")),
			fn("floor", col("d")), fn("ceil", col("d")), fn("floor", col("f")), fn("ceiling", col("g")), fn("floor", col("i")),
			fn("power", col("f"), num("2")), fn("power", col("i"), col("j")), fn("abs", col("d")), fn("mod", col("price"), num("7")),
			fn("mod", col("d"), num("0.3")),
		},
		"time": {
			fn("year", col("ts")), fn("month", col("day")), fn("dayofmonth", col("ts")), fn("hour", col("ts")),
			fn("minute", col("tu")), fn("second", col("ts")), fn("quarter", col("day")), fn("dayofyear", col("ts")),
			fn("dayofweek", col("day")), fn("week", col("ts")),
			fn("date_part", s("HOUR"), col("tu")), fn("date_part", s("millisecond"), col("ts")), fn("date_part", s("year"), col("day")),
			fn("date_format", col("ts"), s("yyyy-MM-dd HH:mm")), fn("date_format", col("tu"), s("yy/M/d h:mm:ss.SSS a EEE 'at' ''D''")),
			fn("date_format", col("ts"), s("MMMM EEEE")),
			bin("+", col("ts"), iv("4", "SECOND")), bin("-", col("tu"), iv("1.5", "MILLISECOND")), bin("+", iv("1", "DAY"), col("ts")),
		},
		"conditional": {
			fn("coalesce", col("nul"), col("i"), col("price")), fn("coalesce", col("d"), col("i")),
			fn("if", col("b"), col("i"), col("price")), fn("if", col("b"), col("s"), s("no")), fn("if", col("c"), col("ts"), col("tu")),
			fn("nullif", col("j"), num("0")), fn("nullif", col("s"), s("a")),
			fn("greatest", col("i"), col("j"), num("3")), fn("least", col("d"), col("i")), fn("greatest", col("s"), col("t")),
			fn("least", col("ts"), col("tu")), fn("greatest", col("f"), col("g")), fn("least", col("day"), col("day")),
		},
		"interval": {
			bin("+", col("day"), col("iv")), bin("-", col("ts"), col("iv")), bin("+", col("iv"), col("tu")),
			bin("+", col("tu"), Lit(arrow.MonthDayNanoInterval{Months: 1, Days: -2, Nanoseconds: 3e9}, tIv)),
			bin("-", col("day"), Lit(arrow.MonthDayNanoInterval{Days: 90}, tIv)), bin("+", col("day"), col("j")),
			bin("-", col("day"), col("day")), bin("-", col("ts"), col("tu")), bin("-", col("ts"), col("day")),
			bin("+", col("iv"), col("iv")), bin("-", col("iv"), Lit(arrow.MonthDayNanoInterval{Days: 1}, tIv)),
			bin("*", col("iv"), col("j")), bin("*", col("f"), col("iv")), bin("/", col("iv"), col("j")), bin("/", col("iv"), col("d")),
			must(NewNeg(col("iv"))), bin("<", col("iv"), Lit(arrow.MonthDayNanoInterval{Months: 1}, tIv)), bin("=", col("iv"), col("iv")),
			bin("<=", col("day"), bin("-", Lit(arrow.Date32(10561), tDate), Lit(arrow.MonthDayNanoInterval{Days: 90}, tIv))),
			bin(">", col("day"), must(NewCast(Lit("1998-09-02 12:00:00", tStr), tTsUs))),
			fn("extract", s("year"), col("ts")), fn("extract", s("epoch"), col("tu")), fn("date_part", s("dow"), col("day")),
			fn("extract", s("isoyear"), col("day")), fn("extract", s("month"), col("iv")), fn("extract", s("epoch"), col("iv")),
			fn("date_trunc", s("week"), col("day")), fn("date_trunc", s("hour"), col("ts")), fn("date_trunc", s("quarter"), col("tu")),
			fn("greatest", col("iv"), Lit(arrow.MonthDayNanoInterval{Days: 3}, tIv)), fn("coalesce", col("iv"), Lit(arrow.MonthDayNanoInterval{}, tIv)),
			must(NewCast(col("iv"), tStr)),
		},
		"text": {
			fn("position", col("t"), col("s")), fn("strpos", col("s"), s("a")), fn("left", col("s"), col("j")), fn("right", col("s"), num("2")),
			fn("lpad", col("s"), col("j"), s("xy")), fn("rpad", col("s"), num("8")), fn("reverse", col("s")), fn("repeat", col("s"), col("j")),
			fn("starts_with", col("s"), col("t")), fn("ends_with", col("s"), s("c")), fn("contains", col("s"), s("b")), fn("strlen", col("s")),
			fn("concat_ws", s(", "), col("s"), col("i"), col("t")), fn("concat_ws", col("t"), col("s"), col("s")),
			fn("regexp_replace", col("s"), s("[aeiou]"), s("<\\0>"), s("g")), fn("regexp_replace", col("s"), col("t"), s("_")),
			fn("regexp_matches", col("s"), s("^a")), fn("regexp_matches", col("s"), col("t")),
			bin("||", col("s"), col("i")), bin("||", col("d"), col("t")),
		},
		"numeric": {
			fn("sqrt", col("j")), fn("exp", col("g")), fn("log", num("2"), col("j")), fn("sign", col("d")), fn("sign", col("f")),
			fn("trunc", col("f"), num("1")), fn("trunc", col("d"), num("-1")), fn("trunc", col("price"), num("-2")),
			must(NewTryCast(col("s"), tInt)), must(NewTryCast(col("f"), tInt)), must(NewTryCast(col("s"), tDate)), must(NewTryCast(col("price"), tDec)),
			bin("/", col("i"), col("j")), bin("%", col("price"), col("j")), bin("/", col("f"), col("j")), bin("/", col("d"), col("j")),
		},
		"json": {
			fn("parse_json", fn("concat", s("{\"v\": "), fn("coalesce", col("i"), num("0")), s("}"))),
			fn("coalesce", fn("parse_json", fn("concat", s("\""), col("price"), s("\""))), fn("parse_json", s("null"))),
			fn("if", col("b"), fn("parse_json", fn("concat", s("["), col("j"), s("]"))), Lit(nil, arrow.Null)),
		},
	}
}

func TestFunctionFamiliesAgree(t *testing.T) {
	for fam, cases := range familyCases() {
		for _, e := range cases {
			t.Run(fam+"/"+e.String(), func(t *testing.T) { checkAgree(t, e) })
		}
	}
}

// Empty, all-NULL and populated batches carry the same type and metadata,
// and that type is what the plan recorded (Type()), for every family.
func TestResultTypeStableAcrossBatches(t *testing.T) {
	for fam, cases := range familyCases() {
		for _, e := range cases {
			t.Run(fam+"/"+e.String(), func(t *testing.T) {
				mem := newMem(t)
				var types []arrow.DataType
				for _, rows := range [][]exec.Row{nil, allNullRows, cachedRows(7), cachedRows(1000)} {
					rec := mkRecord(t, mem, rows)
					a, err := e.EvalColumnar(mem, rec)
					rec.Release()
					if err != nil {
						if len(rows) > 0 && &rows[0] != &allNullRows[0] { // populated batches may legitimately fail (overflow)
							continue
						}
						t.Fatal(err)
					}
					types = append(types, a.DataType())
					a.Release()
				}
				for _, got := range types {
					if !arrow.TypeEqual(got, e.Type()) {
						t.Fatalf("column type %s, planned %s", got, e.Type())
					}
					if ext, ok := got.(arrow.ExtensionType); ok && ext.Serialize() != e.Type().(arrow.ExtensionType).Serialize() {
						t.Fatalf("extension metadata differs")
					}
				}
			})
		}
	}
}

func TestFunctionValues(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	s := func(v string) Expr { return Lit(v, tStr) }
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	ts := func(v string) arrow.Timestamp { x, _ := parseTimestamp(v, arrow.Millisecond); return x }
	cases := []struct {
		e    Expr
		in   vals
		want any
	}{
		{fn("trim", col("s")), vals{"s": "  a b  "}, "a b"},
		{fn("ltrim", col("s")), vals{"s": "  a "}, "a "},
		{fn("trim", col("s"), s("xy")), vals{"s": "xyaxy"}, "a"},
		{fn("replace", col("s"), s("ab"), s("X")), vals{"s": "abcab"}, "XcX"},
		{fn("split_index", col("s"), s(","), num("1")), vals{"s": "a,,b"}, ""},
		{fn("split_index", col("s"), s(","), num("2")), vals{"s": "a,,b"}, "b"},
		{fn("split_index", col("s"), s(","), num("3")), vals{"s": "a,,b"}, nil},
		{fn("split_index", col("s"), s(","), num("-1")), vals{"s": "a"}, nil},
		{fn("split_index", col("s"), s("::"), num("1")), vals{"s": "x::y::z"}, "y"},
		{fn("regexp_extract", col("s"), s("(\\d+)-(\\d+)"), num("2")), vals{"s": "tel 12-34"}, "34"},
		{fn("regexp_extract", col("s"), s("(\\d+)-(\\d+)")), vals{"s": "tel 12-34"}, "12-34"},
		{fn("regexp_extract", col("s"), s("(\\d+)"), num("2")), vals{"s": "12"}, nil},
		{fn("regexp_extract", col("s"), s("x")), vals{"s": "abc"}, nil},
		{fn("count_char", col("s"), s("a")), vals{"s": "banana"}, int64(3)},
		{fn("round", col("d"), num("1")), vals{"d": dec("2.25", 10, 2)}, dec("2.3", 10, 1)},
		{fn("round", col("d"), num("1")), vals{"d": dec("-2.25", 10, 2)}, dec("-2.3", 10, 1)},
		{fn("round", col("d")), vals{"d": dec("2.50", 10, 2)}, dec("3", 9, 0)},
		{fn("round", col("d"), num("-1")), vals{"d": dec("15.00", 10, 2)}, dec("20", 9, 0)},
		{fn("round", col("f"), num("2")), vals{"f": 2.675}, 2.68},
		{fn("round", col("f")), vals{"f": -2.5}, -3.0},
		{fn("round", col("i"), num("-1")), vals{"i": int32(-15)}, int32(-20)},
		{fn("floor", col("d")), vals{"d": dec("-1.50", 10, 2)}, dec("-2", 9, 0)},
		{fn("ceil", col("d")), vals{"d": dec("1.01", 10, 2)}, dec("2", 9, 0)},
		{fn("floor", col("f")), vals{"f": -0.5}, -1.0},
		{fn("power", col("i"), num("3")), vals{"i": int32(2)}, 8.0},
		{fn("hour", col("ts")), vals{"ts": ts("2015-07-15 13:04:05.123")}, int64(13)},
		{fn("minute", col("ts")), vals{"ts": ts("2015-07-15 13:04:05.123")}, int64(4)},
		{fn("second", col("ts")), vals{"ts": ts("2015-07-15 13:04:05.123")}, int64(5)},
		{fn("year", col("ts")), vals{"ts": ts("1969-12-31 23:59:59.999")}, int64(1969)},
		{fn("dayofmonth", col("ts")), vals{"ts": ts("1969-12-31 23:59:59.999")}, int64(31)},
		{fn("hour", col("ts")), vals{"ts": ts("1969-12-31 23:59:59.999")}, int64(23)},
		{fn("dayofweek", col("day")), vals{"day": arrow.Date32(0)}, int64(5)},
		{fn("dayofyear", col("day")), vals{"day": arrow.Date32(16860)}, int64(60)},
		{fn("date_part", s("MILLISECOND"), col("ts")), vals{"ts": ts("2015-07-15 13:04:05.123")}, int64(5123)},
		{fn("date_format", col("ts"), s("yyyy-MM-dd HH:mm")), vals{"ts": ts("2015-07-15 13:04:05.123")}, "2015-07-15 13:04"},
		{fn("date_format", col("ts"), s("yy/M/d h:m:s.SSS a 'o''clock' MMM EEE")), vals{"ts": ts("2015-07-05 03:04:05.009")}, "15/7/5 3:4:5.009 AM o'clock Jul Sun"},
		{bin("+", col("ts"), iv("4", "SECOND")), vals{"ts": ts("2015-07-15 23:59:58")}, ts("2015-07-16 00:00:02")},
		{bin("-", col("ts"), iv("1", "DAY")), vals{"ts": ts("2016-03-01 00:00:00")}, ts("2016-02-29 00:00:00")},
		{fn("if", col("b"), col("i"), col("price")), vals{"b": true, "i": int32(1), "price": int64(2)}, int64(1)},
		{fn("if", col("b"), col("i"), col("price")), vals{"i": int32(1), "price": int64(2)}, int64(2)},
		{fn("nullif", col("j"), num("0")), vals{"j": int32(0)}, nil},
		{fn("nullif", col("j"), num("0")), vals{"j": int32(2)}, int32(2)},
		{fn("greatest", col("i"), col("j"), num("3")), vals{"i": int32(1), "j": int32(2)}, int32(3)},
		{fn("greatest", col("i"), col("j")), vals{"i": int32(1)}, nil},
		{fn("least", col("s"), s("b")), vals{"s": "abc"}, "abc"},
	}
	for _, c := range cases {
		t.Run(c.e.String(), func(t *testing.T) {
			got, err := one(t, c.e, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(got, c.want) {
				t.Fatalf("got %#v (%s), want %#v", got, FormatValue(got, c.e.Type()), c.want)
			}
		})
	}
}

func TestFunctionTypes(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{fn("round", col("d"), num("1")), "DECIMAL(10, 1)"},
		{fn("round", col("d")), "DECIMAL(9, 0)"},
		{fn("round", col("d"), num("3")), "DECIMAL(10, 2)"},
		{fn("round", col("d"), num("-1")), "DECIMAL(9, 0)"},
		{fn("round", col("f"), num("1")), "DOUBLE"},
		{fn("floor", col("d")), "DECIMAL(9, 0)"},
		{fn("ceil", col("g")), "FLOAT"},
		{fn("mod", col("d"), num("0.3")), "DECIMAL(2, 2)"},
		{fn("mod", col("price"), col("i")), "BIGINT"},
		{fn("abs", col("d")), "DECIMAL(10, 2)"},
		{fn("coalesce", col("i"), col("d")), "DECIMAL(12, 2)"},
		{fn("coalesce", col("ts"), col("tu")), "TIMESTAMP(6)"},
		{fn("if", col("b"), col("i"), col("price")), "BIGINT"},
		{fn("if", col("b"), col("ts"), col("day")), "TIMESTAMP(3)"},
		{fn("nullif", col("i"), col("price")), "INT"},
		{fn("greatest", col("i"), num("1.5")), "DECIMAL(11, 1)"},
		{fn("least", col("ts"), col("tu")), "TIMESTAMP(6)"},
		{must(NewBinary("+", col("tu"), iv("1", "SECOND"))), "TIMESTAMP(6)"},
		{must(NewBinary("-", col("ts"), iv("1", "HOUR"))), "TIMESTAMP(3)"},
		{fn("hour", col("ts")), "BIGINT"},
		{fn("parse_json", Lit("{}", tStr)), "JSON"},
		{fn("coalesce", fn("parse_json", col("s")), Lit(nil, arrow.Null)), "JSON"},
		{fn("count_char", col("s"), Lit("a", tStr)), "BIGINT"},
	} {
		if got := typeName(c.e.Type()); got != c.want {
			t.Errorf("%s: type %s, want %s", c.e, got, c.want)
		}
	}
}

func TestFunctionErrors(t *testing.T) {
	num := func(s string) Expr { return must(NumberLit(s)) }
	for _, c := range []struct {
		name string
		args []Expr
		want string
	}{
		{"substring", []Expr{col("s"), col("t")}, "substring(VARCHAR, VARCHAR): no signature matches; accepted: substring(VARCHAR, INT[, INT]) -> VARCHAR"},
		{"substring", []Expr{col("s")}, "substring(VARCHAR): no signature matches"},
		{"count_char", []Expr{col("s"), col("i")}, "count_char(VARCHAR, INT): no signature matches; accepted: count_char(VARCHAR, VARCHAR) -> BIGINT"},
		{"round", []Expr{col("d"), col("i")}, "round: the number of digits must be a constant integer"},
		{"hour", []Expr{col("day")}, "hour(DATE): no signature matches; accepted: hour(TIMESTAMP|TIME) -> BIGINT"},
		{"if", []Expr{col("b"), col("s"), col("i")}, "if: incompatible types VARCHAR and INT"},
		{"greatest", []Expr{col("b"), col("i")}, "incompatible types BOOLEAN and INT"},
		{"regexp_extract", []Expr{col("s"), Lit("(a)\\1", tStr)}, "regexp_extract: invalid regular expression '(a)\\1'"},
		{"date_format", []Expr{col("ts"), Lit("yyyy-QQ", tStr)}, "unsupported pattern letter 'Q'"},
		{"date_part", []Expr{Lit("fortnight", tStr), col("ts")}, "date_part: unknown field 'fortnight'"},
		{"parse_json", []Expr{Lit("{", tStr)}, "parse_json: invalid JSON text '{'"},
		{"count_char", []Expr{Lit("abc", tStr), Lit("ab", tStr)}, ""}, // a UDF is not folded: the error is at run time
		{"nope", nil, "unknown function nope"},
		{"__clink_interval", []Expr{Lit("1", tStr), Lit("FORTNIGHT", tStr)}, "unknown unit"},
	} {
		_, err := NewFunc(c.name, c.args)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%v: error %v, want one containing %q", c.name, c.args, err, c.want)
		}
	}
	if _, err := NewBinary("+", col("ts"), iv("1", "MILLISECOND")); err != nil {
		t.Errorf("ms interval on TIMESTAMP(3): %v", err)
	}
	ts0 := must(NewCast(col("ts"), &arrow.TimestampType{Unit: arrow.Second}))
	if _, err := NewBinary("+", ts0, iv("1", "MILLISECOND")); err == nil || !strings.Contains(err.Error(), "finer than TIMESTAMP(0)") {
		t.Errorf("ms interval on TIMESTAMP(0): %v", err)
	}
	if _, err := NewBinary("+", col("i"), iv("1", "SECOND")); err == nil || !strings.Contains(err.Error(), "cannot apply '+' to INT and INTERVAL") {
		t.Errorf("INT + INTERVAL: %v", err)
	}
	_ = num
	// Run-time errors agree on both paths.
	for _, c := range []struct {
		e    Expr
		in   vals
		want string
	}{
		{must(NewFunc("count_char", []Expr{col("s"), col("t")})), vals{"s": "abc", "t": "ab"}, "count_char: the second argument must be one character, got 'ab'"},
		{must(NewFunc("round", []Expr{col("i"), num("-1")})), vals{"i": int32(2147483647)}, "INT overflow in round(2147483647, -1)"},
		{must(NewFunc("parse_json", []Expr{col("s")})), vals{"s": "{x"}, "parse_json: invalid JSON text '{x'"},
		{must(NewFunc("regexp_extract", []Expr{col("s"), col("t")})), vals{"s": "a", "t": "(?=a)"}, "invalid regular expression"},
	} {
		t.Run(c.e.String(), func(t *testing.T) {
			_, err := one(t, c.e, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// A row-at-a-time UDF and a vectorised one, registered through the public
// API, each with its type rule; both paths agree and the logical type is
// labelled on every batch.
func TestUDFRegistration(t *testing.T) {
	// Row-at-a-time returning JSON (an extension over VARCHAR).
	MustRegister(RowFunc2("test_kv_json", func(k string, v int64) (string, error) {
		return fmt.Sprintf("{%q: %d}", k, v), nil
	}).Returns(JSONType).Describe("a one-key JSON object"))
	// Vectorised, generic T -> T over the integers: twice the input.
	MustRegister(VectorFunc("test_twice", []arrow.DataType{tBig}, nil, func(mem memory.Allocator, args []arrow.Array, n int, out arrow.DataType) (arrow.Array, error) {
		in := args[0].(*array.Int64)
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(2 * in.Value(i))
		}
		return b.NewArray(), nil
	}).Returns(tBig))
	// Rule-typed row UDF: DECIMAL in, same DECIMAL out.
	MustRegister(RowFunc1("test_dec_id", func(x Num) (Num, error) { return x, nil }).Args(tDec).
		Rule(func(ts []arrow.DataType) (arrow.DataType, error) { return ts[0], nil }))

	if err := Register(RowFunc1("count_char", func(s string) (int64, error) { return 0, nil })); err == nil {
		t.Fatal("registering an existing name succeeded")
	}
	if err := Register(RowFunc1("test_bad", func(s string) (int64, error) { return 0, nil }).Returns(JSONType)); err == nil {
		t.Fatal("JSON over BIGINT accepted")
	}
	kv := must(NewFunc("test_kv_json", []Expr{col("s"), col("i")}))
	tw := must(NewFunc("TEST_TWICE", []Expr{col("i")}))
	di := must(NewFunc("test_dec_id", []Expr{col("d")}))
	if !arrow.TypeEqual(kv.Type(), JSONType) || typeName(tw.Type()) != "BIGINT" || typeName(di.Type()) != "DECIMAL(10, 2)" {
		t.Fatalf("types %s %s %s", kv.Type(), tw.Type(), di.Type())
	}
	for _, e := range []Expr{kv, tw, di} {
		t.Run(e.String(), func(t *testing.T) { checkAgree(t, e) })
	}
	if got := RowAtATime(must(NewBinary("+", tw, must(NewFunc("count_char", []Expr{col("s"), Lit("a", tStr)}))))); len(got) != 1 || got[0] != "count_char(s, 'a') [row-at-a-time UDF]" {
		t.Fatalf("RowAtATime = %q", got)
	}
	if RowAtATime(tw) != nil {
		t.Fatal("a vectorised UDF listed as row-at-a-time")
	}
	info, ok := LookupFunction("test_kv_json")
	if !ok || !info.UDF || !info.RowAtATime || info.Signatures[0] != "test_kv_json(VARCHAR, BIGINT) -> JSON" {
		t.Fatalf("info %+v", info)
	}
}

type Num = num

func TestFunctionsListing(t *testing.T) {
	fs := Functions()
	names := map[string]FunctionInfo{}
	for _, f := range fs {
		names[f.Name] = f
		if f.Description == "" || len(f.Signatures) == 0 {
			t.Errorf("%s: no description or signature", f.Name)
		}
	}
	for _, n := range []string{"substring", "count_char", "date_format", "coalesce", "round", "regexp_extract", "split_index", "parse_json"} {
		if _, ok := names[n]; !ok {
			t.Errorf("%s not listed", n)
		}
	}
	if _, ok := names["__clink_interval"]; ok {
		t.Error("internal function listed")
	}
	if got := names["substring"].Signatures[0]; got != "substring(VARCHAR, INT[, INT]) -> VARCHAR" {
		t.Errorf("substring signature %q", got)
	}
	if !names["count_char"].UDF || !names["count_char"].RowAtATime {
		t.Error("count_char is not marked as a row-at-a-time UDF")
	}
}

// A logical type casts to and from its storage only; the value is kept.
func TestJSONCasts(t *testing.T) {
	j := must(NewFunc("parse_json", []Expr{col("s")}))
	back := must(NewCast(j, tStr))
	checkAgree(t, must(NewCast(must(NewCast(col("t"), JSONType)), tStr)))
	got, err := one(t, back, vals{"s": "[1, 2]"})
	if err != nil || got != "[1, 2]" {
		t.Fatalf("CAST(JSON AS VARCHAR) = %v, %v", got, err)
	}
	if _, err := NewCast(j, tInt); err == nil || !strings.Contains(err.Error(), "cannot cast JSON to INT") {
		t.Fatalf("CAST(JSON AS INT): %v", err)
	}
}
