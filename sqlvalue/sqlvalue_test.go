package sqlvalue

import (
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The canonical text per type. Floats follow DuckDB's (and Python's repr)
// layout: plain up to an exponent of 15 (1e15 prints 1000000000000000.0),
// scientific from 1e16 and below 1e-4 (1e+16, 1e-05); every expectation
// that is not a literal rule of the package comment is read back with
// strconv to check it denotes the value.
func TestFormatPerType(t *testing.T) {
	big, _ := decimal128.FromString("-12345678901234567890123.4567", 38, 4)
	ts := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u} }
	for _, c := range []struct {
		v    any
		t    arrow.DataType
		want string
	}{
		{true, arrow.FixedWidthTypes.Boolean, "true"},
		{false, arrow.FixedWidthTypes.Boolean, "false"},
		{int32(-5), arrow.PrimitiveTypes.Int32, "-5"},
		{int64(math.MinInt64), arrow.PrimitiveTypes.Int64, "-9223372036854775808"},
		{1e20, arrow.PrimitiveTypes.Float64, "1e+20"}, // the shell once printed 100000000000000000000, the kernel 1.0E20
		{1e15, arrow.PrimitiveTypes.Float64, "1000000000000000.0"},
		{1e16, arrow.PrimitiveTypes.Float64, "1e+16"},
		{123456789.0, arrow.PrimitiveTypes.Float64, "123456789.0"},
		{0.1, arrow.PrimitiveTypes.Float64, "0.1"},
		{0.0001, arrow.PrimitiveTypes.Float64, "0.0001"},
		{0.00001, arrow.PrimitiveTypes.Float64, "1e-05"},
		{-1.5e-300, arrow.PrimitiveTypes.Float64, "-1.5e-300"},
		{1.0, arrow.PrimitiveTypes.Float64, "1.0"},
		{math.Copysign(0, -1), arrow.PrimitiveTypes.Float64, "-0.0"},
		{math.NaN(), arrow.PrimitiveTypes.Float64, "nan"},
		{math.Inf(-1), arrow.PrimitiveTypes.Float64, "-inf"},
		{float32(0.1), arrow.PrimitiveTypes.Float32, "0.1"},
		{float32(16777216), arrow.PrimitiveTypes.Float32, "16777216.0"},
		{decimal128.FromI64(12345), &arrow.Decimal128Type{Precision: 10, Scale: 2}, "123.45"},
		{decimal128.FromI64(100), &arrow.Decimal128Type{Precision: 10, Scale: 2}, "1.00"},
		{decimal128.FromI64(-5), &arrow.Decimal128Type{Precision: 10, Scale: 3}, "-0.005"},
		{decimal128.FromI64(0), &arrow.Decimal128Type{Precision: 10, Scale: 2}, "0.00"},
		{decimal128.FromI64(math.MinInt64), &arrow.Decimal128Type{Precision: 38, Scale: 0}, "-9223372036854775808"},
		{big, &arrow.Decimal128Type{Precision: 38, Scale: 4}, "-12345678901234567890123.4567"},
		{"a'b", arrow.BinaryTypes.String, "a'b"},
		{[]byte{0, 0xff}, arrow.BinaryTypes.Binary, `\x00ff`},
		{arrow.Date32(19753), arrow.FixedWidthTypes.Date32, "2024-01-31"},
		{arrow.Date32(-719528), arrow.FixedWidthTypes.Date32, "0000-01-01"},
		{arrow.Timestamp(1706702400), ts(arrow.Second), "2024-01-31 12:00:00"},
		{arrow.Timestamp(1706702400500), ts(arrow.Millisecond), "2024-01-31 12:00:00.5"},
		{arrow.Timestamp(-1), ts(arrow.Microsecond), "1969-12-31 23:59:59.999999"},
		{arrow.Timestamp(1706702400000000001), ts(arrow.Nanosecond), "2024-01-31 12:00:00.000000001"},
		// TIME as DuckDB prints it: 12:34:56.5, 12:00:00.000123.
		{arrow.Time64(45296500000), arrow.FixedWidthTypes.Time64us, "12:34:56.5"},
		{arrow.Time64(43200000123), arrow.FixedWidthTypes.Time64us, "12:00:00.000123"},
		{arrow.Time64(3723), arrow.FixedWidthTypes.Time32s, "01:02:03"},
		{arrow.Time64(86399999), arrow.FixedWidthTypes.Time32ms, "23:59:59.999"},
		{arrow.Time64(1), arrow.FixedWidthTypes.Time64ns, "00:00:00.000000001"},
		{arrow.Time64(0), arrow.FixedWidthTypes.Time64us, "00:00:00"},
		{arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3 * 3600e9}, arrow.FixedWidthTypes.MonthDayNanoInterval, "1 month 2 days 03:00:00"},
		{arrow.MonthDayNanoInterval{Months: 26}, arrow.FixedWidthTypes.MonthDayNanoInterval, "2 years 2 months"},
		{arrow.MonthDayNanoInterval{Days: -1, Nanoseconds: -3600e9}, arrow.FixedWidthTypes.MonthDayNanoInterval, "-1 day -01:00:00"},
		{arrow.MonthDayNanoInterval{}, arrow.FixedWidthTypes.MonthDayNanoInterval, "00:00:00"},
		{arrow.MonthDayNanoInterval{Nanoseconds: 1500}, arrow.FixedWidthTypes.MonthDayNanoInterval, "00:00:00.0000015"},
		{[]any{int64(1), nil}, arrow.ListOf(arrow.PrimitiveTypes.Int64), "[1, NULL]"},
		{[]any{int64(1), "x"}, arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String}), "{a=1, b=x}"},
	} {
		got, null := Format(c.v, c.t)
		if null || got != c.want {
			t.Errorf("Format(%v, %s) = %q (null %v), want %q", c.v, c.t, got, null, c.want)
		}
		if f, ok := c.v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			if back, err := strconv.ParseFloat(got, 64); err != nil || back != f {
				t.Errorf("%q reads back as %v, %v", got, back, err)
			}
		}
		// The column appender spells the value the same way.
		if c.v != nil {
			if arr := oneValue(t, c.t, c.v); arr != nil {
				if col := string(Appender(c.t)(arr, 0, nil)); col != c.want {
					t.Errorf("Appender(%s) = %q, Format = %q", c.t, col, c.want)
				}
				arr.Release()
			}
		}
	}
	if s, null := Format(nil, arrow.PrimitiveTypes.Int32); !null || s != "" {
		t.Errorf("NULL: %q, %v", s, null)
	}
	if s, null := Format("NULL", arrow.BinaryTypes.String); null || s != "NULL" {
		t.Errorf("the string 'NULL' is not SQL NULL: %q, %v", s, null)
	}
}

// oneValue builds a one-element column of t holding v (scalar types only).
func oneValue(t *testing.T, typ arrow.DataType, v any) arrow.Array {
	b := array.NewBuilder(memory.NewGoAllocator(), typ)
	defer b.Release()
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.Int32Builder:
		bb.Append(v.(int32))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Float32Builder:
		bb.Append(v.(float32))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.Decimal128Builder:
		bb.Append(v.(decimal128.Num))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		bb.Append(v.([]byte))
	case *array.Date32Builder:
		bb.Append(v.(arrow.Date32))
	case *array.TimestampBuilder:
		bb.Append(v.(arrow.Timestamp))
	case *array.MonthDayNanoIntervalBuilder:
		bb.Append(v.(arrow.MonthDayNanoInterval))
	case *array.Time64Builder:
		bb.Append(v.(arrow.Time64))
	case *array.Time32Builder:
		bb.Append(arrow.Time32(v.(arrow.Time64)))
	default:
		return nil
	}
	return b.NewArray()
}

func TestTypeName(t *testing.T) {
	for _, c := range []struct {
		t    arrow.DataType
		want string
	}{
		{arrow.PrimitiveTypes.Int32, "INT"}, {arrow.PrimitiveTypes.Int64, "BIGINT"}, {arrow.PrimitiveTypes.Float64, "DOUBLE"},
		{&arrow.Decimal128Type{Precision: 38, Scale: 6}, "DECIMAL(38, 6)"}, {arrow.BinaryTypes.String, "VARCHAR"},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, "TIMESTAMP(3)"}, {&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, "TIMESTAMP_LTZ(0)"},
		{arrow.FixedWidthTypes.Date32, "DATE"}, {arrow.FixedWidthTypes.MonthDayNanoInterval, "INTERVAL"}, {arrow.Null, "NULL"},
		{arrow.StructOf(arrow.Field{Name: "a`b", Type: arrow.PrimitiveTypes.Int64}), "ROW<`a``b` BIGINT NOT NULL>"},
		{arrow.ListOf(arrow.BinaryTypes.String), "ARRAY<VARCHAR>"},
	} {
		if got := TypeName(c.t); got != c.want {
			t.Errorf("TypeName(%s) = %s, want %s", c.t, got, c.want)
		}
	}
}

// A zoned timestamp shows in its zone (Paris is UTC+1 in January).
func TestZonedTimestamp(t *testing.T) {
	typ := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}
	if got, _ := Format(arrow.Timestamp(1704164645), typ); got != "2024-01-02 04:04:05" {
		t.Errorf("got %s", got)
	}
}

func BenchmarkAppendFloat(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := 0; i < b.N; i++ {
		buf = AppendFloat(buf[:0], float64(i)*1.25, 64)
	}
}

// AppendFloat lays out the shortest digits itself; a reference built from
// strconv's own 'f' and 'e' forms must agree for random values of every
// magnitude, and the text must read back to the value.
func TestAppendFloatMatchesReference(t *testing.T) {
	ref := func(f float64, bits int) string {
		e := strconv.FormatFloat(f, 'e', -1, bits)
		x, _ := strconv.Atoi(e[len(e)-3:])
		if e[len(e)-3] == '-' || e[len(e)-3] == '+' {
			x, _ = strconv.Atoi(e[len(e)-2:])
			if e[len(e)-3] == '-' {
				x = -x
			}
		}
		if x < -4 || x > 15 {
			return e // strconv writes two exponent digits at least, as DuckDB
		}
		s := strconv.FormatFloat(f, 'f', -1, bits)
		for _, c := range s {
			if c == '.' {
				return s
			}
		}
		return s + ".0"
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
			continue
		}
		if i%2 == 0 { // also ordinary magnitudes
			f = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.Intn(40)-20))
		}
		got := string(AppendFloat(nil, f, 64))
		if want := ref(f, 64); got != want {
			t.Fatalf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
		if back, err := strconv.ParseFloat(got, 64); err != nil || back != f {
			t.Fatalf("%s reads back as %v", got, back)
		}
		g := float32(f)
		if !math.IsInf(float64(g), 0) && g != 0 {
			if got, want := string(AppendFloat(nil, float64(g), 32)), ref(float64(g), 32); got != want {
				t.Fatalf("AppendFloat(float32 %v) = %s, want %s", g, got, want)
			}
		}
	}
}

// TestIsNullUntyped: every value of a null-typed array is NULL, though the
// array has no validity bitmap to say so; a typed array's nulls are too,
// and its values are not.
func TestIsNullUntyped(t *testing.T) {
	untyped := array.NewNull(3)
	defer untyped.Release()
	for i := 0; i < 3; i++ {
		if !IsNull(untyped, i) {
			t.Errorf("untyped NULL %d is not NULL", i)
		}
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{1, 0}, []bool{true, false})
	typed := b.NewArray()
	defer typed.Release()
	if IsNull(typed, 0) || !IsNull(typed, 1) {
		t.Errorf("typed: IsNull = %v, %v; want false, true", IsNull(typed, 0), IsNull(typed, 1))
	}
}

// TestDisplay: SQL NULL and the string 'NULL' read differently, and a
// quoted display is never the display of another value.
func TestDisplay(t *testing.T) {
	cases := []struct {
		s    string
		null bool
		want string
	}{
		{"", true, "NULL"},
		{"NULL", false, "'NULL'"},
		{"null", false, "'null'"},
		{"'NULL'", false, "'''NULL'''"},
		{"it's", false, "it's"},
		{"x", false, "x"},
		{"", false, ""},
	}
	seen := map[string]string{}
	for _, c := range cases {
		got := Display(c.s, c.null)
		if got != c.want {
			t.Errorf("Display(%q, %v) = %q, want %q", c.s, c.null, got, c.want)
		}
		key := c.s
		if c.null {
			key = "<null>"
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("%q shown as %q, as %q is", key, got, prev)
		}
		seen[got] = key
	}
}
