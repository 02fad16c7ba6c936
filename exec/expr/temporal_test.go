package expr

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func ivl(months, days int32, ns int64) arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: ns}
}

func ivLit(months, days int32, ns int64) Expr { return Lit(ivl(months, days, ns), tIv) }

func dateLit(s string) Expr { d, err := parseDate(s); must(nil, err); return Lit(d, tDate) }

func tsLit(s string, u arrow.TimeUnit) Expr {
	v, err := parseTimestamp(s, u)
	if err != nil {
		panic(err)
	}
	return Lit(v, &arrow.TimestampType{Unit: u})
}

// Expected values are the examples of PostgreSQL's "Date/Time Operators"
// table (postgresql.org/docs/current/functions-datetime.html) and DuckDB's
// date, timestamp and interval pages, evaluated through a column (both
// paths) and, where noted, as constants.
func TestTemporalArithmetic(t *testing.T) {
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	asDay := func(e Expr) Expr { return must(NewCast(e, tDate)) } // a DATE column from day
	day := col("day")
	ts := col("ts")
	tu := col("tu")
	iv := col("iv")
	fmtOf := func(e Expr) Expr { return must(NewCast(e, tStr)) }
	cases := []struct {
		name string
		e    Expr
		in   vals
		want any // a string: compared with the value cast to VARCHAR
	}{
		// PostgreSQL: date '2001-09-28' + interval '1 hour' = 2001-09-28 01:00:00
		{"date+interval", fmtOf(bin("+", day, ivLit(0, 0, 3600e9))), vals{"day": d("2001-09-28")}, "2001-09-28 01:00:00"},
		{"date-interval", fmtOf(bin("-", day, ivLit(0, 0, 3600e9))), vals{"day": d("2001-09-28")}, "2001-09-27 23:00:00"},
		{"interval+date", fmtOf(bin("+", ivLit(0, 0, 3600e9), day)), vals{"day": d("2001-09-28")}, "2001-09-28 01:00:00"},
		// Month arithmetic clamps to the month's end (PostgreSQL, DuckDB).
		{"month end leap", fmtOf(bin("+", day, ivLit(1, 0, 0))), vals{"day": d("2024-01-31")}, "2024-02-29 00:00:00"},
		{"month end", fmtOf(bin("+", day, ivLit(1, 0, 0))), vals{"day": d("2023-01-31")}, "2023-02-28 00:00:00"},
		{"minus month", fmtOf(bin("-", day, ivLit(1, 0, 0))), vals{"day": d("2024-03-31")}, "2024-02-29 00:00:00"},
		{"year from leap day", fmtOf(bin("+", day, ivLit(12, 0, 0))), vals{"day": d("2024-02-29")}, "2025-02-28 00:00:00"},
		{"months then days", fmtOf(bin("+", day, ivLit(1, 1, 0))), vals{"day": d("2024-01-31")}, "2024-03-01 00:00:00"},
		{"negative interval", fmtOf(bin("+", day, ivLit(-1, -1, -3600e9))), vals{"day": d("2024-03-01")}, "2024-01-30 23:00:00"},
		// PostgreSQL: timestamp '2001-09-28 23:00' - interval '23 hours' = 2001-09-28 00:00:00
		{"ts-interval ms", fmtOf(bin("-", ts, ivLit(0, 0, 23*3600e9))), vals{"ts": tsv("2001-09-28 23:00:00", arrow.Millisecond)}, "2001-09-28 00:00:00"},
		{"ts+interval us", fmtOf(bin("+", tu, ivLit(1, 2, 1000))), vals{"tu": tsv("2024-01-31 12:00:00.000001", arrow.Microsecond)}, "2024-03-02 12:00:00.000002"},
		{"ts+interval column", fmtOf(bin("+", tu, iv)), vals{"tu": tsv("2024-01-31 12:00:00", arrow.Microsecond), "iv": ivl(1, 0, -3600e9)}, "2024-02-29 11:00:00"},
		{"ts-interval column", fmtOf(bin("-", ts, iv)), vals{"ts": tsv("2024-03-31 00:00:00", arrow.Millisecond), "iv": ivl(1, 1, 0)}, "2024-02-28 00:00:00"},
		// PostgreSQL: date '2001-09-28' + 7 = 2001-10-05; date '2001-10-01' - 7 = 2001-09-24
		{"date+int", bin("+", day, must(NumberLit("7"))), vals{"day": d("2001-09-28")}, d("2001-10-05")},
		{"int+date", bin("+", col("j"), day), vals{"day": d("2001-09-28"), "j": int32(-2)}, d("2001-09-26")},
		{"date-int", bin("-", day, must(NumberLit("7"))), vals{"day": d("2001-10-01")}, d("2001-09-24")},
		// PostgreSQL: date '2001-10-01' - date '2001-09-28' = 3 (BIGINT here, as DuckDB)
		{"date-date", bin("-", day, dateLit("2001-09-28")), vals{"day": d("2001-10-01")}, int64(3)},
		{"date-date leap", bin("-", day, dateLit("2024-02-28")), vals{"day": d("2024-03-01")}, int64(2)},
		// PostgreSQL: timestamp '2001-09-29 03:00' - timestamp '2001-07-27 12:00' = 63 days 15:00:00
		{"ts-ts", fmtOf(bin("-", ts, tsLit("2001-07-27 12:00:00", arrow.Millisecond))), vals{"ts": tsv("2001-09-29 03:00:00", arrow.Millisecond)}, "63 days 15:00:00"},
		{"ts-ts negative", fmtOf(bin("-", tsLit("2001-07-27 12:00:00", arrow.Millisecond), ts)), vals{"ts": tsv("2001-07-28 14:00:00.5", arrow.Millisecond)}, "-1 day -02:00:00.5"},
		{"ts-ts units", fmtOf(bin("-", tu, ts)), vals{"ts": tsv("2001-01-01 00:00:00", arrow.Millisecond), "tu": tsv("2001-01-01 00:00:00.000001", arrow.Microsecond)}, "00:00:00.000001"},
		{"ts-date", fmtOf(bin("-", ts, day)), vals{"ts": tsv("2001-01-02 06:00:00", arrow.Millisecond), "day": d("2001-01-01")}, "1 day 06:00:00"},
		// PostgreSQL: interval '1 day' + interval '1 hour' = 1 day 01:00:00;
		// interval '1 day' - interval '1 hour' = 1 day -01:00:00
		{"iv+iv", fmtOf(bin("+", ivLit(0, 1, 0), iv)), vals{"iv": ivl(0, 0, 3600e9)}, "1 day 01:00:00"},
		{"iv-iv", fmtOf(bin("-", ivLit(0, 1, 0), iv)), vals{"iv": ivl(0, 0, 3600e9)}, "1 day -01:00:00"},
		// PostgreSQL: 21 * interval '1 day' = 21 days; interval '1 hour' * 3.5 = 03:30:00;
		// interval '1 hour' / 1.5 = 00:40:00; - interval '23 hours' = -23:00:00
		{"int*iv", fmtOf(bin("*", must(NumberLit("21")), iv)), vals{"iv": ivl(0, 1, 0)}, "21 days"},
		{"iv*dec", fmtOf(bin("*", iv, must(NumberLit("3.5")))), vals{"iv": ivl(0, 0, 3600e9)}, "03:30:00"},
		{"iv/dec", fmtOf(bin("/", iv, must(NumberLit("1.5")))), vals{"iv": ivl(0, 0, 3600e9)}, "00:40:00"},
		{"month/2 cascades", fmtOf(bin("/", iv, must(NumberLit("2")))), vals{"iv": ivl(1, 1, 0)}, "15 days 12:00:00"},
		{"iv/0 is NULL", bin("/", iv, must(NumberLit("0"))), vals{"iv": ivl(1, 0, 0)}, nil},
		{"neg iv", fmtOf(must(NewNeg(iv))), vals{"iv": ivl(0, 0, 23*3600e9)}, "-23:00:00"},
		{"year month", fmtOf(iv), vals{"iv": ivl(14, 3, 4*3600e9+5*60e9+6.5e9)}, "1 year 2 months 3 days 04:05:06.5"},
		// NULL semantics.
		{"null date", bin("+", day, ivLit(1, 0, 0)), vals{}, nil},
		{"null interval", bin("+", ts, iv), vals{"ts": tsv("2001-01-01 00:00:00", arrow.Millisecond)}, nil},
		{"null date-int", bin("-", day, col("j")), vals{"day": d("2001-01-01")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := one(t, c.e, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(got, c.want) {
				t.Fatalf("%s = %#v, want %#v", c.e, got, c.want)
			}
		})
	}
	// Result types.
	for _, c := range []struct {
		e    Expr
		want arrow.DataType
	}{
		{bin("+", day, ivLit(0, 90, 0)), tTsUs},
		{bin("-", ts, ivLit(0, 90, 0)), tTsMs},
		{bin("+", day, col("j")), tDate},
		{bin("-", day, day), tBig},
		{bin("-", ts, tu), tIv},
		{bin("*", iv, col("f")), tIv},
	} {
		if !arrow.TypeEqual(c.e.Type(), c.want) {
			t.Errorf("%s: type %s, want %s", c.e, typeName(c.e.Type()), typeName(c.want))
		}
	}
	_ = asDay
}

func d(s string) arrow.Date32 {
	v, err := parseDate(s)
	if err != nil {
		panic(err)
	}
	return v
}

func tsv(s string, u arrow.TimeUnit) arrow.Timestamp {
	v, err := parseTimestamp(s, u)
	if err != nil {
		panic(err)
	}
	return v
}

// Constant date arithmetic folds when the query is bound, and a DATE
// column compared with the folded TIMESTAMP compares days (no per-row
// widening): the TPC-H Q1 predicate.
func TestDateMinusIntervalFoldsAndComparesDays(t *testing.T) {
	bound := must(NewBinary("-", dateLit("1998-12-01"), ivLit(0, 90, 0)))
	l, ok := bound.(*Literal)
	if !ok || FormatValue(l.v, l.t) != "1998-09-02 00:00:00" {
		t.Fatalf("DATE '1998-12-01' - INTERVAL '90' DAY = %v (%T), want the constant 1998-09-02 00:00:00", bound, bound)
	}
	for _, c := range []struct {
		op   string
		rhs  Expr
		day  string
		want bool
	}{
		{"<=", bound, "1998-09-02", true}, {"<=", bound, "1998-09-03", false}, {"<", bound, "1998-09-02", false},
		{">", bound, "1998-09-02", false}, {">=", bound, "1998-09-02", true}, {"=", bound, "1998-09-02", true},
		// Against a timestamp with a time of day: a date is its midnight.
		{"<", tsLit("1998-09-02 12:00:00", arrow.Microsecond), "1998-09-02", true},
		{"<=", tsLit("1998-09-02 12:00:00", arrow.Microsecond), "1998-09-03", false},
		{">", tsLit("1998-09-02 12:00:00", arrow.Microsecond), "1998-09-02", false},
		{">=", tsLit("1998-09-02 12:00:00", arrow.Microsecond), "1998-09-03", true},
		{"=", tsLit("1998-09-02 12:00:00", arrow.Microsecond), "1998-09-02", false},
		{"<>", tsLit("1998-09-02 12:00:00", arrow.Microsecond), "1998-09-02", true},
	} {
		e := must(NewBinary(c.op, col("day"), c.rhs))
		got, err := one(t, e, vals{"day": d(c.day)})
		if err != nil || got != c.want {
			t.Errorf("%s with day=%s: %v, %v; want %v", e, c.day, got, err, c.want)
		}
		flipped := must(NewBinary(map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}[c.op], c.rhs, col("day")))
		if got, err := one(t, flipped, vals{"day": d(c.day)}); err != nil || got != c.want {
			t.Errorf("%s with day=%s: %v, %v; want %v", flipped, c.day, got, err, c.want)
		}
	}
	// The day comparison reads the DATE column as it is: no CAST in the plan.
	e := must(NewBinary("<=", col("day"), bound))
	if strings.Contains(e.String(), "CAST") || e.(*Compare).r.Type().ID() != arrow.DATE32 {
		t.Errorf("%s: want a DATE comparison", e)
	}
}

// Interval comparison normalises as PostgreSQL (interval '1 month' =
// interval '30 days' is true; '1 day' = '24 hours' is true).
func TestIntervalCompare(t *testing.T) {
	for _, c := range []struct {
		op   string
		a, b arrow.MonthDayNanoInterval
		want bool
	}{
		{"=", ivl(1, 0, 0), ivl(0, 30, 0), true},
		{"=", ivl(0, 1, 0), ivl(0, 0, 24*3600e9), true},
		{"<", ivl(0, 29, 0), ivl(1, 0, 0), true},
		{">", ivl(0, 0, 1), ivl(0, 0, 0), true},
		{"<", ivl(-1, 0, 0), ivl(0, -29, 0), true},
		{"<>", ivl(1, 0, 0), ivl(0, 31, 0), true},
		{">=", ivl(0, 1, -1), ivl(0, 0, 24*3600e9), false},
	} {
		e := must(NewBinary(c.op, col("iv"), Lit(c.b, tIv)))
		got, err := one(t, e, vals{"iv": c.a})
		if err != nil || got != c.want {
			t.Errorf("%v %s %v: %v, %v; want %v", c.a, c.op, c.b, got, err, c.want)
		}
	}
	if e := must(NewFunc("greatest", []Expr{col("iv"), ivLit(1, 0, 0)})); e.Type().ID() != arrow.INTERVAL_MONTH_DAY_NANO {
		t.Errorf("greatest over intervals: %s", typeName(e.Type()))
	}
}

// EXTRACT: DuckDB's date part table for 2021-08-03 11:59:44.123456
// (duckdb.org/docs/sql/functions/datepart: year 2021, month 8, day 3,
// decade 202, century 21, millennium 3, microseconds 44123456,
// milliseconds 44123, second 44, minute 59, hour 11, epoch 1627991984,
// dow 2, isodow 2, week 31, doy 215, quarter 3).
func TestExtract(t *testing.T) {
	in := vals{"tu": tsv("2021-08-03 11:59:44.123456", arrow.Microsecond), "day": d("2021-08-03"), "iv": ivl(14, 3, 4*3600e9+5*60e9+6.5e9)}
	for _, c := range []struct {
		field string
		x     string
		want  any
	}{
		{"year", "tu", int64(2021)}, {"month", "tu", int64(8)}, {"day", "tu", int64(3)}, {"decade", "tu", int64(202)},
		{"century", "tu", int64(21)}, {"millennium", "tu", int64(3)}, {"microseconds", "tu", int64(44123456)},
		{"milliseconds", "tu", int64(44123)}, {"second", "tu", int64(44)}, {"minute", "tu", int64(59)}, {"hour", "tu", int64(11)},
		{"epoch", "tu", 1627991984.123456}, {"dow", "tu", int64(2)}, {"isodow", "tu", int64(2)}, {"week", "tu", int64(31)},
		{"doy", "tu", int64(215)}, {"quarter", "tu", int64(3)}, {"isoyear", "tu", int64(2021)}, {"YEAR", "day", int64(2021)},
		{"dayofweek", "day", int64(2)}, {"epoch", "day", float64(1627948800)}, {"dayofyear", "day", int64(215)},
		// Intervals: 1 year 2 months 3 days 04:05:06.5
		{"year", "iv", int64(1)}, {"month", "iv", int64(2)}, {"day", "iv", int64(3)}, {"hour", "iv", int64(4)},
		{"minute", "iv", int64(5)}, {"second", "iv", int64(6)}, {"millisecond", "iv", int64(6500)},
		{"epoch", "iv", float64((14*30+3)*86400) + 4*3600 + 5*60 + 6.5},
	} {
		e := must(NewFunc("extract", []Expr{Lit(c.field, tStr), col(c.x)}))
		got, err := one(t, e, in)
		if err != nil || !sameValue(got, c.want) {
			t.Errorf("extract(%s from %s) = %#v, %v; want %#v", c.field, c.x, got, err, c.want)
		}
	}
	// ISO weeks at the year's edges, Sunday as dow 0, century boundaries.
	for _, c := range []struct {
		field, day string
		want       int64
	}{
		{"week", "2021-01-03", 53}, {"isoyear", "2021-01-03", 2020}, {"week", "2020-12-31", 53}, {"week", "2024-12-30", 1},
		{"isoyear", "2024-12-30", 2025}, {"dow", "2024-06-02", 0}, {"isodow", "2024-06-02", 7}, {"century", "2000-12-31", 20},
		{"century", "2001-01-01", 21}, {"doy", "2024-12-31", 366}, {"quarter", "2024-04-01", 2},
	} {
		e := must(NewFunc("date_part", []Expr{Lit(c.field, tStr), col("day")}))
		got, err := one(t, e, vals{"day": d(c.day)})
		if err != nil || got != c.want {
			t.Errorf("date_part(%s, %s) = %v, %v; want %d", c.field, c.day, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		field, x, want string
	}{
		{"hour", "day", "a DATE has no HOUR"}, {"dow", "iv", "an INTERVAL has no DOW"}, {"fortnight", "ts", "unknown field"},
	} {
		if _, err := NewFunc("extract", []Expr{Lit(bad.field, tStr), col(bad.x)}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("extract(%s from %s): %v, want %q", bad.field, bad.x, err, bad.want)
		}
	}
	if _, err := NewFunc("extract", []Expr{col("s"), col("ts")}); err == nil {
		t.Error("a non-constant field must be refused")
	}
}

// date_trunc: PostgreSQL's examples (date_trunc('hour', timestamp
// '2001-02-16 20:38:40') = 2001-02-16 20:00:00, 'year' = 2001-01-01
// 00:00:00) and DuckDB's week (Monday) and century (2000) rules.
func TestDateTrunc(t *testing.T) {
	for _, c := range []struct {
		unit, x string
		in      any
		want    string
	}{
		{"hour", "ts", tsv("2001-02-16 20:38:40", arrow.Millisecond), "2001-02-16 20:00:00"},
		{"year", "ts", tsv("2001-02-16 20:38:40", arrow.Millisecond), "2001-01-01 00:00:00"},
		{"quarter", "tu", tsv("2001-08-16 20:38:40", arrow.Microsecond), "2001-07-01 00:00:00"},
		{"month", "day", d("2024-02-29"), "2024-02-01 00:00:00"},
		{"week", "day", d("2024-06-02"), "2024-05-27 00:00:00"},
		{"week", "day", d("2024-05-27"), "2024-05-27 00:00:00"},
		{"day", "tu", tsv("1969-12-31 23:59:59.5", arrow.Microsecond), "1969-12-31 00:00:00"},
		{"minute", "ts", tsv("2001-02-16 20:38:40.5", arrow.Millisecond), "2001-02-16 20:38:00"},
		{"second", "ts", tsv("2001-02-16 20:38:40.5", arrow.Millisecond), "2001-02-16 20:38:40"},
		{"millisecond", "tu", tsv("2001-02-16 20:38:40.123456", arrow.Microsecond), "2001-02-16 20:38:40.123"},
		{"decade", "day", d("2019-05-05"), "2010-01-01 00:00:00"},
		{"century", "day", d("2021-05-05"), "2000-01-01 00:00:00"},
	} {
		e := must(NewCast(must(NewFunc("date_trunc", []Expr{Lit(c.unit, tStr), col(c.x)})), tStr))
		got, err := one(t, e, vals{c.x: c.in})
		if err != nil || got != c.want {
			t.Errorf("date_trunc(%s, %v) = %v, %v; want %s", c.unit, c.in, got, err, c.want)
		}
	}
	if e := must(NewFunc("date_trunc", []Expr{Lit("month", tStr), col("day")})); !arrow.TypeEqual(e.Type(), tTsUs) {
		t.Errorf("date_trunc over DATE: %s, want TIMESTAMP(6)", typeName(e.Type()))
	}
	if e := must(NewFunc("date_trunc", []Expr{Lit("month", tStr), col("ts")})); !arrow.TypeEqual(e.Type(), tTsMs) {
		t.Errorf("date_trunc over TIMESTAMP(3): %s", typeName(e.Type()))
	}
}

// One statement, one clock reading: every clock function bound with the
// same context agrees; a different statement may differ.
func TestStatementClock(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 58, 123456789, time.UTC)
	ctx := WithStatementTime(context.Background(), at)
	a := must(NewFuncContext(ctx, "now", nil))
	b := must(NewFuncContext(ctx, "current_timestamp", nil))
	c := must(NewFuncContext(ctx, "current_date", nil))
	lt := must(NewFuncContext(ctx, "localtimestamp", nil))
	va, _ := a.EvalRow(nil)
	vb, _ := b.EvalRow(nil)
	vl, _ := lt.EvalRow(nil)
	if va != vb || va != vl || FormatValue(va, a.Type()) != "2024-02-29 23:59:58.123456" {
		t.Errorf("now %v, current_timestamp %v, localtimestamp %v", va, vb, vl)
	}
	if vc, _ := c.EvalRow(nil); FormatValue(vc, c.Type()) != "2024-02-29" {
		t.Errorf("current_date = %v", vc)
	}
	if a.String() != "now" {
		t.Errorf("EXPLAIN text %q", a.String())
	}
	// Folds into arithmetic as a constant.
	if _, ok := must(NewBinary("-", c, ivLit(0, 1, 0))).(*Literal); !ok {
		t.Error("current_date - INTERVAL '1' DAY should fold")
	}
}

func TestIntervalTextRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v    arrow.MonthDayNanoInterval
		text string
	}{
		{ivl(0, 0, 0), "00:00:00"},
		{ivl(1, 2, 3*3600e9), "1 month 2 days 03:00:00"}, // the brief's DuckDB example
		{ivl(12, 0, 0), "1 year"},
		{ivl(-13, -1, 0), "-1 year -1 month -1 day"},
		{ivl(0, 0, -90e9), "-00:01:30"},
		{ivl(0, 0, 1500), "00:00:00.0000015"},
		{ivl(0, 0, 100*3600e9), "100:00:00"},
	} {
		if got := FormatValue(c.v, tIv); got != c.text {
			t.Errorf("FormatValue(%v) = %q, want %q", c.v, got, c.text)
		}
		back, err := ParseInterval(c.text)
		if err != nil || back != c.v {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", c.text, back, err, c.v)
		}
	}
	for _, c := range []struct {
		value, unit string
		want        arrow.MonthDayNanoInterval
	}{
		{"1", "MONTH", ivl(1, 0, 0)}, {"3", "DAY", ivl(0, 3, 0)}, {"2", "HOUR", ivl(0, 0, 7200e9)},
		{"1.5", "MONTH", ivl(1, 15, 0)}, {"1.5", "DAY", ivl(0, 1, 12*3600e9)}, {"2", "YEAR", ivl(24, 0, 0)},
		{"-90", "DAY", ivl(0, -90, 0)}, {"1", "WEEK", ivl(0, 7, 0)}, {"1.5", "SECOND", ivl(0, 0, 1.5e9)},
	} {
		got, err := IntervalOf(c.value, c.unit)
		if err != nil || got != c.want {
			t.Errorf("IntervalOf(%s, %s) = %v, %v; want %v", c.value, c.unit, got, err, c.want)
		}
	}
	// CAST between VARCHAR and INTERVAL, both paths.
	e := must(NewCast(must(NewCast(col("iv"), tStr)), tIv))
	checkAgree(t, e)
	if got, err := one(t, e, vals{"iv": ivl(-3, 7, -1)}); err != nil || got != ivl(-3, 7, -1) {
		t.Errorf("round trip through VARCHAR: %v, %v", got, err)
	}
	if got, err := one(t, must(NewTryCast(col("s"), tIv)), vals{"s": "3 fortnights"}); err != nil || got != nil {
		t.Errorf("TRY_CAST of bad interval text: %v, %v", got, err)
	}
}

func TestIntervalOverflowIsAnError(t *testing.T) {
	e := must(NewBinary("*", col("iv"), must(NumberLit("1000000000"))))
	if _, err := one(t, e, vals{"iv": ivl(100, 0, 0)}); err == nil || !strings.Contains(err.Error(), "INTERVAL overflow") {
		t.Errorf("want an INTERVAL overflow error, got %v", err)
	}
	e = must(NewBinary("+", col("tu"), col("iv")))
	if _, err := one(t, e, vals{"tu": arrow.Timestamp(math.MaxInt64 - 10), "iv": ivl(0, 1, 0)}); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("want a TIMESTAMP overflow error, got %v", err)
	}
}
