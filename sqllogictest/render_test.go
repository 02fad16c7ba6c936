package sqllogictest

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// The expected strings are what SQLite's sqlite3_column_int64,
// sqlite3_column_double with "%.3f" and sqlite3_column_text give for the
// same value; ties and near-ties were checked against the exact binary
// values (Python's decimal.Decimal(x)).
func TestRender(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	i64, f64, str := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String
	cases := []struct {
		v    any
		t    arrow.DataType
		c    byte
		want string
	}{
		{nil, i64, 'I', "NULL"},
		{nil, f64, 'R', "NULL"},
		{nil, str, 'T', "NULL"},

		{int64(-42), i64, 'I', "-42"},
		{int32(7), arrow.PrimitiveTypes.Int32, 'I', "7"},
		{2.9, f64, 'I', "2"},   // truncation toward zero
		{-2.9, f64, 'I', "-2"}, // not floor
		{float32(-99.75), arrow.PrimitiveTypes.Float32, 'I', "-99"},
		{1e30, f64, 'I', "9223372036854775807"},
		{-1e30, f64, 'I', "-9223372036854775808"},
		{math.NaN(), f64, 'I', "0"},
		{decimal128.FromI64(12345), dec, 'I', "123"},
		{decimal128.FromI64(-12345), dec, 'I', "-123"},
		{true, arrow.FixedWidthTypes.Boolean, 'I', "1"},
		{"12abc", str, 'I', "12"},
		{"  -7x", str, 'I', "-7"},
		{"1.9", str, 'I', "1"},
		{"abc", str, 'I', "0"},
		{"", str, 'I', "0"},
		{"99999999999999999999", str, 'I', "9223372036854775807"},
		{"-99999999999999999999", str, 'I', "-9223372036854775808"},

		{int64(1), i64, 'R', "1.000"},
		{0.0625, f64, 'R', "0.063"},   // an exact tie: away from zero (Go and glibc give 0.062)
		{-0.0625, f64, 'R', "-0.063"}, // likewise
		{0.0015, f64, 'R', "0.002"},   // 0.00150000000000000003...
		{1.0005, f64, 'R', "1.000"},   // 1.00049999999999994...
		{2.0005, f64, 'R', "2.001"},   // 2.00050000000000016...
		{-0.0001, f64, 'R', "-0.000"},
		{123456789.5, f64, 'R', "123456789.500"},
		{decimal128.FromI64(12345), dec, 'R', "123.450"},
		{"1.5abc", str, 'R', "1.500"},
		{"-.5", str, 'R', "-0.500"},
		{"1e2x", str, 'R', "100.000"},
		{"abc", str, 'R', "0.000"},
		{math.Inf(1), f64, 'R', "Inf"},
		{false, arrow.FixedWidthTypes.Boolean, 'R', "0.000"},

		{"", str, 'T', "(empty)"},
		{"a\tb\x7f", str, 'T', "a@b@"},
		{"é", str, 'T', "@@"}, // two bytes outside 0x20-0x7e
		{int64(42), i64, 'T', "42"},
		{1.0, f64, 'T', "1.0"},
		{0.1, f64, 'T', "0.1"},
		{1.0 / 3, f64, 'T', "0.333333333333333"},
		{1e20, f64, 'T', "1.0e+20"},
		{1e14, f64, 'T', "100000000000000.0"},
		{true, arrow.FixedWidthTypes.Boolean, 'T', "1"},
		{[]byte("x\x00"), arrow.BinaryTypes.Binary, 'T', "x@"},
		{decimal128.FromI64(-12345), dec, 'T', "-123.45"},
		{arrow.Date32(1), arrow.FixedWidthTypes.Date32, 'T', "1970-01-02"},
	}
	for _, c := range cases {
		if got := render(c.v, c.t, c.c); got != c.want {
			t.Errorf("render(%#v as %c) = %q, want %q", c.v, c.c, got, c.want)
		}
	}
}
