// Package sqlvalue is the one place that spells SQL values and SQL type
// names as text: the shell's table/csv/json output, the Jupyter kernel's
// renderers, CAST(x AS VARCHAR) and DESCRIBE all go through it, so a value
// reads the same wherever it is shown. It depends on Arrow and the
// standard library only.
//
// The canonical text per type (DuckDB's spelling where the engines differ):
//
//	BOOLEAN        true, false
//	TINYINT..BIGINT plain digits
//	FLOAT, DOUBLE  the shortest text that reads back to the same value;
//	               plain notation with at least one fraction digit while the
//	               decimal exponent is in [-4, 15] (1.0, 0.25,
//	               1000000000000000.0), else scientific with a signed,
//	               two-digit-minimum exponent (1e+16, 1.5e-05); nan, inf,
//	               -inf. This is the layout of DuckDB (and Python's repr).
//	DECIMAL(p, s)  exactly s fraction digits (1.50 for DECIMAL(4, 2))
//	VARCHAR        the string itself
//	BYTES          PostgreSQL's bytea hex form: \x0aff
//	DATE           2024-01-31 (years before 1000 zero-padded, BC negative)
//	TIMESTAMP(p)   2024-01-31 12:00:00, then .fraction only when non-zero,
//	               trailing zeros trimmed; a zoned timestamp in its zone
//	TIME(p)        12:34:56, then .fraction as TIMESTAMP's
//	INTERVAL       as DuckDB prints it: 1 year 2 months 3 days 04:05:06.5;
//	               the parts that are zero are left out, 00:00:00 when all
//	               are
//	ROW            {a=1, b=x};  ARRAY  [1, 2]; NULL inside them: NULL
//
// SQL NULL is not text: Format and the appenders report it apart (isNull)
// and each renderer decides how to show it.
package sqlvalue

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// TypeName renders an Arrow type in SQL terms (BIGINT, DECIMAL(10, 2),
// TIMESTAMP(3), ROW<`a` BIGINT, ...>, VARCHAR, INTERVAL), the spelling
// DESCRIBE shows, error messages use and sql.ParseType reads back. Types
// SQL has no name for (e.g. unsigned integers from a Parquet file) render
// as Arrow names in upper case; an extension type by its name (JSON).
func TypeName(t arrow.DataType) string {
	switch t := t.(type) {
	case nil:
		return "NULL"
	case *arrow.NullType:
		return "NULL"
	case *arrow.BooleanType:
		return "BOOLEAN"
	case *arrow.Int8Type:
		return "TINYINT"
	case *arrow.Int16Type:
		return "SMALLINT"
	case *arrow.Int32Type:
		return "INT"
	case *arrow.Int64Type:
		return "BIGINT"
	case *arrow.Float32Type:
		return "FLOAT"
	case *arrow.Float64Type:
		return "DOUBLE"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case *arrow.Decimal256Type:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return "VARCHAR"
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		return "BYTES"
	case *arrow.Date32Type, *arrow.Date64Type:
		return "DATE"
	case *arrow.TimestampType:
		name := "TIMESTAMP"
		if t.TimeZone != "" {
			name = "TIMESTAMP_LTZ"
		}
		return fmt.Sprintf("%s(%d)", name, UnitPrecision(t.Unit))
	case *arrow.Time32Type:
		return fmt.Sprintf("TIME(%d)", UnitPrecision(t.Unit))
	case *arrow.Time64Type:
		return fmt.Sprintf("TIME(%d)", UnitPrecision(t.Unit))
	case *arrow.MonthDayNanoIntervalType, *arrow.DurationType, *arrow.DayTimeIntervalType, *arrow.MonthIntervalType:
		return "INTERVAL"
	case *arrow.StructType:
		var b strings.Builder
		b.WriteString("ROW<")
		for i, f := range t.Fields() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteIdent(f.Name))
			b.WriteByte(' ')
			b.WriteString(TypeName(f.Type))
			if !f.Nullable {
				b.WriteString(" NOT NULL")
			}
		}
		b.WriteString(">")
		return b.String()
	case *arrow.MapType:
		return "MAP<" + TypeName(t.KeyType()) + ", " + TypeName(t.ItemType()) + ">"
	case *arrow.ListType:
		s := "ARRAY<" + TypeName(t.Elem())
		if !t.ElemField().Nullable {
			s += " NOT NULL"
		}
		return s + ">"
	case *arrow.LargeListType:
		return "ARRAY<" + TypeName(t.Elem()) + ">"
	case *arrow.FixedSizeListType:
		return "ARRAY<" + TypeName(t.Elem()) + ">"
	case *arrow.DictionaryType:
		return TypeName(t.ValueType)
	case arrow.ExtensionType:
		if t.ExtensionName() == "arrow.json" {
			return "JSON"
		}
		return strings.ToUpper(t.ExtensionName())
	}
	return strings.ToUpper(t.String())
}

// QuoteIdent quotes an identifier with backticks, doubling any inside.
func QuoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// UnitPrecision is the number of fraction digits of a time unit.
func UnitPrecision(u arrow.TimeUnit) int {
	switch u {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 3
	case arrow.Microsecond:
		return 6
	}
	return 9
}

// UnitsPerSecond is how many ticks of u make a second.
func UnitsPerSecond(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1e6
	}
	return 1e9
}
