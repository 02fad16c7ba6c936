package expr

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// tmv is a TIME(6) value from text (the parser under test is checked
// against hand-computed ticks in TestTimeParse).
func tmv(s string) arrow.Time64 {
	v, err := parseTime(s, arrow.Microsecond)
	if err != nil {
		panic(err)
	}
	return v
}

func tmLit(s string) Expr { return Lit(tmv(s), tTime) }

// TIME text in and out: the forms DuckDB reads (HH:MM, one-digit hours, a
// fraction truncated to the precision, a leading date ignored) and the
// ranges it refuses; ticks computed by hand.
func TestTimeParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		u    arrow.TimeUnit
		want int64
	}{
		{"12:34:56", arrow.Microsecond, (12*3600 + 34*60 + 56) * 1e6},
		{"12:34", arrow.Microsecond, (12*3600 + 34*60) * 1e6},
		{" 1:2:3 ", arrow.Microsecond, 3723 * 1e6},
		{"01:02:03.1234567", arrow.Microsecond, 3723*1e6 + 123456},
		{"01:02:03.1234567", arrow.Millisecond, 3723*1e3 + 123},
		{"01:02:03.1234567", arrow.Nanosecond, 3723*1e9 + 123456700},
		{"01:02:03.9", arrow.Second, 3723},
		{"2024-01-02 03:04:05", arrow.Microsecond, (3*3600 + 4*60 + 5) * 1e6},
		{"2024-01-02T03:04:05.5", arrow.Microsecond, (3*3600+4*60+5)*1e6 + 500000},
		{"23:59:59.999999", arrow.Microsecond, 86400*1e6 - 1},
		{"00:00:00", arrow.Microsecond, 0},
	} {
		got, err := parseTime(c.in, c.u)
		if err != nil || int64(got) != c.want {
			t.Errorf("parseTime(%q, %s) = %d, %v; want %d", c.in, c.u, got, err, c.want)
		}
	}
	for _, bad := range []string{"25:00", "12:60", "12:34:60", "24:00:00", "abc", "12", "12:", "12:34:56.", "-01:00", "12:34:56 x", ""} {
		if v, err := parseTime(bad, arrow.Microsecond); err == nil {
			t.Errorf("parseTime(%q) = %d, want an error", bad, v)
		}
	}
}

// Expected values: PostgreSQL's "Date/Time Operators" table
// (postgresql.org/docs/current/functions-datetime.html: time '01:00' +
// interval '3 hours' = 04:00:00, time '05:00' - interval '2 hours' =
// 03:00:00, date '2001-09-28' + time '03:00' = 2001-09-28 03:00:00, time
// '05:00' - time '03:00' = 02:00:00) and DuckDB's time page and EXTRACT
// (12:34:56.789: hour 12, minute 34, second 56, millisecond 56789,
// microsecond 56789000, epoch 45296.789), through columns (both paths).
func TestTimeSemantics(t *testing.T) {
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	fmtOf := func(e Expr) Expr { return must(NewCast(e, tStr)) }
	fn := func(name string, args ...Expr) Expr { return must(NewFunc(name, args)) }
	str := func(s string) Expr { return Lit(s, tStr) }
	tm, tm3, day, tu, iv := col("tm"), col("tm3"), col("day"), col("tu"), col("iv")
	cases := []struct {
		name string
		e    Expr
		in   vals
		want any // a string: compared with the value cast to VARCHAR
	}{
		{"text", fmtOf(tm), vals{"tm": tmv("12:34:56.5")}, "12:34:56.5"},
		{"text micro", fmtOf(tm), vals{"tm": tmv("12:00:00.000123")}, "12:00:00.000123"},
		{"text TIME(3)", fmtOf(tm3), vals{"tm3": arrow.Time64(3723004)}, "01:02:03.004"},
		{"from text", must(NewCast(col("s"), tTime)), vals{"s": "1:2:3"}, tmv("01:02:03")},
		{"bad text", must(NewCast(col("s"), tTime)), vals{"s": "25:00"}, "error: invalid TIME(6) value '25:00'"},
		{"try bad text", must(NewTryCast(col("s"), tTime)), vals{"s": "12:60"}, nil},
		{"from timestamp", fmtOf(must(NewCast(tu, tTime))), vals{"tu": tsv("2024-01-02 03:04:05.6", arrow.Microsecond)}, "03:04:05.6"},
		{"from timestamp before 1970", fmtOf(must(NewCast(tu, tTime))), vals{"tu": tsv("1969-12-31 23:00:00.25", arrow.Microsecond)}, "23:00:00.25"},
		{"to coarser floors", fmtOf(must(NewCast(tm, tTime3))), vals{"tm": tmv("12:34:56.789999")}, "12:34:56.789"},
		{"to finer", must(NewCast(tm3, tTime)), vals{"tm3": arrow.Time64(3723004)}, arrow.Time64(3723004000)},
		{"plus interval", fmtOf(bin("+", tm, ivLit(0, 0, 3*3600e9))), vals{"tm": tmv("01:00")}, "04:00:00"},
		{"minus interval", fmtOf(bin("-", tm, ivLit(0, 0, 2*3600e9))), vals{"tm": tmv("05:00")}, "03:00:00"},
		{"interval plus", fmtOf(bin("+", ivLit(0, 0, 3*3600e9), tm)), vals{"tm": tmv("01:00")}, "04:00:00"},
		{"wraps forward", fmtOf(bin("+", tm, ivLit(0, 0, 2*3600e9))), vals{"tm": tmv("23:00")}, "01:00:00"},
		{"wraps back", fmtOf(bin("-", tm, ivLit(0, 0, 2*3600e9))), vals{"tm": tmv("01:00")}, "23:00:00"},
		{"wraps by more than a day", fmtOf(bin("-", tm, ivLit(0, 0, 25*3600e9))), vals{"tm": tmv("10:00")}, "09:00:00"},
		{"months and days leave the clock", fmtOf(bin("+", tm, ivLit(1, 3, 3600e9))), vals{"tm": tmv("10:00")}, "11:00:00"},
		{"interval column", fmtOf(bin("-", tm, iv)), vals{"tm": tmv("10:00"), "iv": ivl(0, -1, 3*3600e9+1000)}, "06:59:59.999999"},
		{"last microsecond wraps", fmtOf(bin("+", tm, ivLit(0, 0, 1000))), vals{"tm": tmv("23:59:59.999999")}, "00:00:00"},
		{"TIME(3) floors the interval", fmtOf(bin("+", tm3, ivLit(0, 0, 1500999))), vals{"tm3": arrow.Time64(0)}, "00:00:00.001"},
		{"date plus time", fmtOf(bin("+", day, tm)), vals{"day": d("2001-09-28"), "tm": tmv("03:00")}, "2001-09-28 03:00:00"},
		{"time plus date", fmtOf(bin("+", tm, day)), vals{"day": d("1969-12-31"), "tm": tmv("23:59:59.5")}, "1969-12-31 23:59:59.5"},
		{"time minus time", fmtOf(bin("-", tm, tmLit("03:00"))), vals{"tm": tmv("05:00")}, "02:00:00"},
		{"earlier minus later", fmtOf(bin("-", tm, tmLit("12:30"))), vals{"tm": tmv("10:00")}, "-02:30:00"},
		{"mixed precisions", fmtOf(bin("-", tm, tm3)), vals{"tm": tmv("00:00:01"), "tm3": arrow.Time64(1)}, "00:00:00.999"},
		{"extract hour", fn("extract", str("hour"), tm), vals{"tm": tmv("12:34:56.789")}, int64(12)},
		{"extract minute", fn("extract", str("minute"), tm), vals{"tm": tmv("12:34:56.789")}, int64(34)},
		{"extract second", fn("extract", str("second"), tm), vals{"tm": tmv("12:34:56.789")}, int64(56)},
		{"extract millisecond", fn("extract", str("millisecond"), tm), vals{"tm": tmv("12:34:56.789")}, int64(56789)},
		{"extract microsecond", fn("extract", str("microsecond"), tm3), vals{"tm3": arrow.Time64(45296789)}, int64(56789000)},
		{"extract epoch", fn("extract", str("epoch"), tm), vals{"tm": tmv("12:34:56.789")}, 45296.789},
		{"hour()", fn("hour", tm3), vals{"tm3": arrow.Time64(7*3600e3 + 8*60e3 + 9e3)}, int64(7)},
		{"second()", fn("second", tm), vals{"tm": tmv("07:08:09")}, int64(9)},
		{"less than text", bin("<", tm, str("13:00")), vals{"tm": tmv("12:00")}, true},
		{"equal across precisions", bin("=", tm, tm3), vals{"tm": tmv("00:00:01.5"), "tm3": arrow.Time64(1500)}, true},
		{"greater across precisions", bin(">", tm3, tm), vals{"tm": tmv("00:00:01.499999"), "tm3": arrow.Time64(1500)}, true},
		{"greatest", fmtOf(fn("greatest", tm, tmLit("13:00"))), vals{"tm": tmv("01:00")}, "13:00:00"},
		{"least over TIME(3)", fmtOf(fn("least", tm3, tm)), vals{"tm": tmv("01:00"), "tm3": arrow.Time64(1)}, "00:00:00.001"},
		{"in", must(NewIn(tm, []Expr{tmLit("01:00"), tmLit("02:00")}, false)), vals{"tm": tmv("02:00")}, true},
		{"null time", bin("+", tm, ivLit(0, 0, 1)), vals{}, nil},
		{"null interval", bin("+", tm, iv), vals{"tm": tmv("01:00")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := one(t, c.e, c.in)
			if w, ok := c.want.(string); ok && strings.HasPrefix(w, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(w, "error: ")) {
					t.Fatalf("%s: error %v, want %q", c.e, err, w)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sameValue(got, c.want) {
				t.Fatalf("%s = %#v, want %#v", c.e, got, c.want)
			}
		})
	}
	for _, c := range []struct {
		e    Expr
		want arrow.DataType
	}{
		{bin("+", tm, iv), tTime},
		{bin("-", tm3, iv), tTime3},
		{bin("+", day, tm), tTsUs},
		{bin("+", tm3, day), &arrow.TimestampType{Unit: arrow.Millisecond}},
		{bin("-", tm, tm3), tIv},
		{fn("extract", str("epoch"), tm), tF64},
	} {
		if !arrow.TypeEqual(c.e.Type(), c.want) {
			t.Errorf("%s: type %s, want %s", c.e, typeName(c.e.Type()), typeName(c.want))
		}
	}
}

// What a TIME is not: no date fields, no casts to or from DATE and
// numbers, no sums of times (PostgreSQL and DuckDB refuse them too).
func TestTimeRefusals(t *testing.T) {
	tm := col("tm")
	for _, c := range []struct {
		name string
		f    func() (Expr, error)
		want string
	}{
		{"year", func() (Expr, error) { return NewFunc("extract", []Expr{Lit("year", tStr), tm}) }, "a TIME has no YEAR"},
		{"dow", func() (Expr, error) { return NewFunc("extract", []Expr{Lit("dow", tStr), tm}) }, "a TIME has no DOW"},
		{"to date", func() (Expr, error) { return NewCast(tm, tDate) }, "cannot cast TIME(6) to DATE"},
		{"from date", func() (Expr, error) { return NewCast(col("day"), tTime) }, "cannot cast DATE to TIME(6)"},
		{"to bigint", func() (Expr, error) { return NewCast(tm, tBig) }, "cannot cast TIME(6) to BIGINT"},
		{"time + time", func() (Expr, error) { return NewBinary("+", tm, tm) }, "TIME"},
		{"interval - time", func() (Expr, error) { return NewBinary("-", ivLit(0, 0, 1), tm) }, "TIME"},
		{"year()", func() (Expr, error) { return NewFunc("year", []Expr{tm}) }, "no signature matches"},
	} {
		if _, err := c.f(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// Every TIME expression agrees between the row and the columnar path over
// the generated data (batch sizes, NULLs, sliced records).
func TestTimeAgree(t *testing.T) {
	bin := func(op string, l, r Expr) Expr { return must(NewBinary(op, l, r)) }
	tm, tm3 := col("tm"), col("tm3")
	for _, e := range []Expr{
		bin("+", tm, col("iv")),
		bin("-", tm3, col("iv")),
		bin("-", tm, ivLit(0, 0, 90*60e9)),
		bin("-", tm, tm3),
		bin("+", col("day"), tm3),
		bin("<", tm3, tm),
		bin("=", tm, tmLit("12:00")),
		must(NewCast(tm, tStr)),
		must(NewCast(tm3, tStr)),
		must(NewCast(tm, tTime3)),
		must(NewCast(tm3, tTime)),
		must(NewCast(col("ts"), tTime)),
		must(NewCast(col("tu"), tTime3)),
		must(NewFunc("extract", []Expr{Lit("second", tStr), tm3})),
		must(NewFunc("extract", []Expr{Lit("epoch", tStr), tm})),
		must(NewFunc("greatest", []Expr{tm, tm3})),
		must(NewCase(nil, []When{{Cond: col("b"), Then: tm}}, tm3)),
	} {
		t.Run(e.String(), func(t *testing.T) { checkAgree(t, e) })
	}
}

// IN over intervals compares as = does (PostgreSQL's interval_cmp: 30
// days = 1 month, 24 hours = 1 day), not by the parts as written.
func TestIntervalInNormalises(t *testing.T) {
	in := must(NewIn(col("iv"), []Expr{ivLit(0, 30, 0), ivLit(0, 0, 25*3600e9)}, false))
	for _, c := range []struct {
		iv   arrow.MonthDayNanoInterval
		want any
	}{
		{ivl(1, 0, 0), true},
		{ivl(0, 0, 720*3600e9), true},
		{ivl(0, 1, 3600e9), true},
		{ivl(0, 29, 0), false},
	} {
		got, err := one(t, in, vals{"iv": c.iv})
		if err != nil || got != c.want {
			t.Errorf("%v IN ('30 days', '25 hours') = %v, %v; want %v", c.iv, got, err, c.want)
		}
	}
}
