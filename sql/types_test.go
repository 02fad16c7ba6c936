package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestParseType(t *testing.T) {
	ms := &arrow.TimestampType{Unit: arrow.Millisecond}
	cases := []struct {
		in   string
		want arrow.DataType
		str  string // TypeString of the result
	}{
		{"BOOLEAN", arrow.FixedWidthTypes.Boolean, "BOOLEAN"},
		{"tinyint", arrow.PrimitiveTypes.Int32, "INT"},
		{"SmallInt", arrow.PrimitiveTypes.Int32, "INT"},
		{"INT", arrow.PrimitiveTypes.Int32, "INT"},
		{"integer", arrow.PrimitiveTypes.Int32, "INT"},
		{"BIGINT", arrow.PrimitiveTypes.Int64, "BIGINT"},
		{"FLOAT", arrow.PrimitiveTypes.Float32, "FLOAT"},
		{"REAL", arrow.PrimitiveTypes.Float32, "FLOAT"},
		{"DOUBLE", arrow.PrimitiveTypes.Float64, "DOUBLE"},
		{"double precision", arrow.PrimitiveTypes.Float64, "DOUBLE"},
		{"DECIMAL", &arrow.Decimal128Type{Precision: 10, Scale: 0}, "DECIMAL(10, 0)"},
		{"NUMERIC(5)", &arrow.Decimal128Type{Precision: 5, Scale: 0}, "DECIMAL(5, 0)"},
		{"decimal(23, 3)", &arrow.Decimal128Type{Precision: 23, Scale: 3}, "DECIMAL(23, 3)"},
		{"VARCHAR", arrow.BinaryTypes.String, "VARCHAR"},
		{"VARCHAR(255)", arrow.BinaryTypes.String, "VARCHAR"},
		{"CHAR(3)", arrow.BinaryTypes.String, "VARCHAR"},
		{"STRING", arrow.BinaryTypes.String, "VARCHAR"},
		{"BYTES", arrow.BinaryTypes.Binary, "BYTES"},
		{"VARBINARY(10)", arrow.BinaryTypes.Binary, "BYTES"},
		{"BINARY", arrow.BinaryTypes.Binary, "BYTES"},
		{"TIMESTAMP", &arrow.TimestampType{Unit: arrow.Microsecond}, "TIMESTAMP(6)"},
		{"TIMESTAMP(0)", &arrow.TimestampType{Unit: arrow.Second}, "TIMESTAMP(0)"},
		{"TIMESTAMP(3)", ms, "TIMESTAMP(3)"},
		{"timestamp(2) without time zone", ms, "TIMESTAMP(3)"},
		{"TIMESTAMP(6)", &arrow.TimestampType{Unit: arrow.Microsecond}, "TIMESTAMP(6)"},
		{"TIMESTAMP(9)", &arrow.TimestampType{Unit: arrow.Nanosecond}, "TIMESTAMP(9)"},
		{"TIMESTAMP_LTZ(3)", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, "TIMESTAMP_LTZ(3)"},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, "TIMESTAMP_LTZ(3)"},
		{"DATE", arrow.FixedWidthTypes.Date32, "DATE"},
		{"ARRAY<BIGINT>", arrow.ListOf(arrow.PrimitiveTypes.Int64), "ARRAY<BIGINT>"},
		{"ARRAY<ARRAY<INT>>", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), "ARRAY<ARRAY<INT>>"},
		{"MAP<STRING, ARRAY<INT>>", arrow.MapOf(arrow.BinaryTypes.String, arrow.ListOf(arrow.PrimitiveTypes.Int32)), "MAP<VARCHAR, ARRAY<INT>>"},
		{"ROW<a INT, `dateTime` TIMESTAMP(3)>", arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "dateTime", Type: ms, Nullable: true}), "ROW<`a` INT, `dateTime` TIMESTAMP(3)>"},
		{"ROW(a INT NOT NULL, b ROW<c ARRAY<VARCHAR>>)", arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Name: "b", Type: arrow.StructOf(arrow.Field{Name: "c", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}), Nullable: true}),
			"ROW<`a` INT NOT NULL, `b` ROW<`c` ARRAY<VARCHAR>>>"},
		{"ROW<`we``ird` INT 'a description'>", arrow.StructOf(arrow.Field{Name: "we`ird", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), "ROW<`we``ird` INT>"},
		{`ROW<"x" BIGINT>`, arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), "ROW<`x` BIGINT>"},
		{"TIME", arrow.FixedWidthTypes.Time64us, "TIME(6)"},
		{"TIME(0)", arrow.FixedWidthTypes.Time32s, "TIME(0)"},
		{"time(3) without time zone", arrow.FixedWidthTypes.Time32ms, "TIME(3)"},
		{"TIME(9)", arrow.FixedWidthTypes.Time64ns, "TIME(9)"},
		{"INTERVAL", arrow.FixedWidthTypes.MonthDayNanoInterval, "INTERVAL"},
		{"FLOAT(53)", arrow.PrimitiveTypes.Float64, "DOUBLE"},
		{"character varying(10)", arrow.BinaryTypes.String, "VARCHAR"},
		{"TEXT", arrow.BinaryTypes.String, "VARCHAR"},
		{"INT ARRAY", arrow.ListOf(arrow.PrimitiveTypes.Int32), "ARRAY<INT>"},
		{"ARRAY<INT NOT NULL>", arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32), "ARRAY<INT NOT NULL>"},
		{"MAP<STRING,ARRAY<ROW<a INT>>>", arrow.MapOf(arrow.BinaryTypes.String, arrow.ListOf(arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}))), "MAP<VARCHAR, ARRAY<ROW<`a` INT>>>"},
	}
	for _, c := range cases {
		got, err := ParseType(c.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", c.in, err)
			continue
		}
		if !arrow.TypeEqual(got, c.want) {
			t.Errorf("ParseType(%q) = %v, want %v", c.in, got, c.want)
		}
		s := TypeString(got)
		if s != c.str {
			t.Errorf("TypeString(ParseType(%q)) = %s, want %s", c.in, s, c.str)
		}
		// The SQL spelling reads back as the same type.
		back, err := ParseType(s)
		if err != nil || !arrow.TypeEqual(back, got) {
			t.Errorf("ParseType(%q) = %v, %v; want %v", s, back, err, got)
		}
	}
}

func TestParseTypeErrors(t *testing.T) {
	cases := []struct {
		in  string
		col int
		msg string
	}{
		{"FOO", 1, "unsupported type FOO"},
		{"ARRAY<FOO>", 7, "unsupported type FOO"},
		{"DECIMAL(40, 2)", 1, "precision 40 is out of range"},
		{"DECIMAL(5, 6)", 1, "scale 6 exceeds precision 5"},
		{"TIMESTAMP(12)", 1, "precision 12 is out of range"},
		{"TIMESTAMP WITH TIME ZONE", 1, "TIMESTAMP WITH TIME ZONE is not supported"},
		{"TIME(3) WITH TIME ZONE", 1, "TIME WITH TIME ZONE is not supported"},
		{"TIME(10)", 1, "TIME precision 10 is out of range"},
		{"INT(11)", 4, "INT takes no length or precision"},
		{"DECIMAL(1, 2, 3)", 13, "expected ')' to close '(' at line 1, column 8, found ','"},
		{"MAP<INT, INT", 13, "unexpected end of statement: expected '>' to close MAP<...> after INT"},
		{"ROW<a INT", 10, "expected '>' to close ROW<...>"},
		{"ROW<>", 1, "at least one field"},
		{"ROW<a INT, a BIGINT>", 12, `duplicate ROW field "a"`},
		{"ARRAY<INT>>", 11, "expected end of type after '>', found '>'"},
		{"MAP<INT>", 8, "expected ','"},
		{"VARCHAR(x)", 9, "expected an integer"},
		{"INT extra", 5, `expected end of type after INT, found "extra"`},
		{"", 0, "empty type name"},
		{"ROW()", 1, "ROW needs at least one field"},
		{"ROW<a>", 6, "expected a type name after \"a\", found '>'"},
		{"VARCHAR(-1)", 9, "expected an integer in VARCHAR(...)"},
	}
	for _, c := range cases {
		_, err := ParseType(c.in)
		var pe *Error
		if !errors.As(err, &pe) || pe.Column != c.col || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("ParseType(%q) error = %v; want column %d containing %q", c.in, err, c.col, c.msg)
		}
	}
}

func TestTypeStringOtherArrowTypes(t *testing.T) {
	cases := map[string]arrow.DataType{
		"TINYINT":       arrow.PrimitiveTypes.Int8,
		"SMALLINT":      arrow.PrimitiveTypes.Int16,
		"UINT64":        arrow.PrimitiveTypes.Uint64,
		"VARCHAR":       arrow.BinaryTypes.LargeString,
		"TIME(3)":       arrow.FixedWidthTypes.Time32ms,
		"DATE":          arrow.FixedWidthTypes.Date64,
		"ARRAY<BIGINT>": arrow.LargeListOf(arrow.PrimitiveTypes.Int64),
		"NULL":          nil,
	}
	for want, typ := range cases {
		if got := TypeString(typ); got != want {
			t.Errorf("TypeString(%v) = %s, want %s", typ, got, want)
		}
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	if got := TypeString(dict); got != "VARCHAR" {
		t.Errorf("TypeString(dictionary) = %s", got)
	}
}
