package parquet

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// conv says how a column's physical Parquet values become its Arrow column.
// It is chosen once per (file, column) when the table is opened, so the scan
// loop switches on it once per page span rather than per value.
type conv uint8

const (
	convBool          conv = iota
	convInt32              // INT32 -> Int32 or Date32 (same bits)
	convInt64              // INT64 -> Int64 or Timestamp (same bits; scaled when mul/div != 1)
	convInt32ToInt64       // INT32 -> Int64 (declared wider than the file)
	convUint32ToInt64      // UINT_32 -> Int64
	convFloat32            // FLOAT -> Float32
	convFloat64            // DOUBLE -> Float64
	convFloat32To64        // FLOAT -> Float64 (declared wider than the file)
	convInt96              // INT96 legacy timestamp -> Timestamp (ns, or scaled)
	convDecInt32           // DECIMAL on INT32 -> Decimal128
	convDecInt64           // DECIMAL on INT64 -> Decimal128
	convDecFixed           // DECIMAL on FIXED_LEN_BYTE_ARRAY -> Decimal128
	convDecBytes           // DECIMAL on BYTE_ARRAY -> Decimal128
	convBytes              // BYTE_ARRAY -> String or Binary
	convFixedBytes         // FIXED_LEN_BYTE_ARRAY -> Binary
)

// fileColumn is one top-level column as a file's footer describes it.
type fileColumn struct {
	name     string
	leaf     int // index of its column chunk in every row group
	physical format.Type
	typeLen  int
	optional bool
	typ      arrow.DataType // the natural Arrow type (nil when unsupported)
	conv     conv
	err      error // why the column cannot be read (nested, unsupported type)
}

// binding says how one table column is read from one file.
type binding struct {
	leaf     int
	conv     conv
	maxDef   byte  // 1 for an optional column, 0 for a required one
	mul, div int64 // timestamp unit scaling (1, 1 when none)
	typeLen  int
	physical format.Type
}

// fileColumns lists the top-level columns of a footer's schema. Nested
// columns and unsupported types are listed with err set, so that a table
// that does not use them can still be read.
func fileColumns(path string, schema []format.SchemaElement) ([]fileColumn, error) {
	if len(schema) == 0 {
		return nil, fmt.Errorf("parquet: %s: footer has an empty schema", path)
	}
	var cols []fileColumn
	pos, leaf := 1, 0
	for i := 0; i < int(schema[0].NumChildren.V); i++ {
		if pos >= len(schema) {
			return nil, fmt.Errorf("parquet: %s: footer schema is truncated", path)
		}
		e := &schema[pos]
		if e.NumChildren.V > 0 || (e.RepetitionType.Valid && e.RepetitionType.V == format.Repeated) {
			end, leaves, err := skipSubtree(schema, pos)
			if err != nil {
				return nil, fmt.Errorf("parquet: %s: %w", path, err)
			}
			cols = append(cols, fileColumn{name: e.Name, leaf: leaf,
				err: fmt.Errorf("parquet: %s: column %s: nested type not supported yet", path, e.Name)})
			pos, leaf = end, leaf+leaves
			continue
		}
		fc := fileColumn{name: e.Name, leaf: leaf, physical: e.Type.V, typeLen: int(e.TypeLength.V),
			optional: e.RepetitionType.Valid && e.RepetitionType.V == format.Optional}
		fc.typ, fc.conv, fc.err = naturalType(e)
		if fc.err != nil {
			fc.err = fmt.Errorf("parquet: %s: column %s: %w", path, e.Name, fc.err)
		}
		cols = append(cols, fc)
		pos++
		leaf++
	}
	return cols, nil
}

// skipSubtree returns the index after the subtree rooted at pos and the
// number of leaves (column chunks) in it.
func skipSubtree(schema []format.SchemaElement, pos int) (end, leaves int, err error) {
	if pos >= len(schema) {
		return 0, 0, fmt.Errorf("footer schema is truncated")
	}
	n := int(schema[pos].NumChildren.V)
	pos++
	if n == 0 {
		return pos, 1, nil
	}
	for i := 0; i < n; i++ {
		var l int
		pos, l, err = skipSubtree(schema, pos)
		if err != nil {
			return 0, 0, err
		}
		leaves += l
	}
	return pos, leaves, nil
}

// naturalType maps one leaf to the Arrow type clink reads it as.
//
// Timestamps get TimeZone "": clink's TIMESTAMP is zone-less, and an
// instant stored adjusted-to-UTC is shown as its UTC wall-clock time (the
// same numbers either way). One zone rule keeps declared and inferred
// schemas comparable.
func naturalType(e *format.SchemaElement) (arrow.DataType, conv, error) {
	lt := e.LogicalType.Value
	ct, hasCT := e.ConvertedType.V, e.ConvertedType.Valid
	isCT := func(c deprecated.ConvertedType) bool { return hasCT && ct == c }

	if dec, ok := decimalOf(e); ok {
		if dec.Precision < 1 || dec.Precision > 38 {
			return nil, 0, fmt.Errorf("DECIMAL(%d,%d) precision is outside 1..38", dec.Precision, dec.Scale)
		}
		t := &arrow.Decimal128Type{Precision: dec.Precision, Scale: dec.Scale}
		switch e.Type.V {
		case format.Int32:
			return t, convDecInt32, nil
		case format.Int64:
			return t, convDecInt64, nil
		case format.FixedLenByteArray:
			if e.TypeLength.V < 1 || e.TypeLength.V > 16 {
				return nil, 0, fmt.Errorf("DECIMAL stored in %d bytes is not supported", e.TypeLength.V)
			}
			return t, convDecFixed, nil
		case format.ByteArray:
			return t, convDecBytes, nil
		}
		return nil, 0, fmt.Errorf("DECIMAL on physical type %s", e.Type.V)
	}

	switch e.Type.V {
	case format.Boolean:
		return arrow.FixedWidthTypes.Boolean, convBool, nil
	case format.Int32:
		switch l := lt.(type) {
		case *format.DateType:
			return arrow.FixedWidthTypes.Date32, convInt32, nil
		case *format.IntType:
			if !l.IsSigned && l.BitWidth == 32 {
				return arrow.PrimitiveTypes.Int64, convUint32ToInt64, nil
			}
			return arrow.PrimitiveTypes.Int32, convInt32, nil
		case *format.TimeType:
			if _, ok := l.Unit.Value.(*format.MilliSeconds); !ok {
				return nil, 0, fmt.Errorf("parquet type INT32 %s is not supported", l)
			}
			return arrow.FixedWidthTypes.Time32ms, convInt32, nil
		case nil:
		default:
			return nil, 0, fmt.Errorf("parquet type INT32 %s is not supported yet", l)
		}
		switch {
		case isCT(deprecated.Date):
			return arrow.FixedWidthTypes.Date32, convInt32, nil
		case isCT(deprecated.Uint32):
			return arrow.PrimitiveTypes.Int64, convUint32ToInt64, nil
		case isCT(deprecated.TimeMillis):
			return arrow.FixedWidthTypes.Time32ms, convInt32, nil
		}
		return arrow.PrimitiveTypes.Int32, convInt32, nil
	case format.Int64:
		switch l := lt.(type) {
		case *format.TimestampType:
			unit, err := timeUnit(&l.Unit)
			if err != nil {
				return nil, 0, err
			}
			return &arrow.TimestampType{Unit: unit}, convInt64, nil
		case *format.TimeType:
			// A time of day (TIME(p)): adjusted to UTC or not, the same
			// ticks since midnight, as timestamps above.
			switch l.Unit.Value.(type) {
			case *format.MicroSeconds:
				return arrow.FixedWidthTypes.Time64us, convInt64, nil
			case *format.NanoSeconds:
				return arrow.FixedWidthTypes.Time64ns, convInt64, nil
			}
			return nil, 0, fmt.Errorf("parquet type INT64 %s is not supported", l)
		case *format.IntType:
			if !l.IsSigned && l.BitWidth == 64 {
				return nil, 0, fmt.Errorf("parquet type UINT64 is not supported yet")
			}
			if !l.IsSigned && l.BitWidth == 32 {
				return arrow.PrimitiveTypes.Int64, convInt64, nil
			}
			return arrow.PrimitiveTypes.Int64, convInt64, nil
		case nil:
		default:
			return nil, 0, fmt.Errorf("parquet type INT64 %s is not supported yet", l)
		}
		switch {
		case isCT(deprecated.TimestampMillis):
			return &arrow.TimestampType{Unit: arrow.Millisecond}, convInt64, nil
		case isCT(deprecated.TimestampMicros):
			return &arrow.TimestampType{Unit: arrow.Microsecond}, convInt64, nil
		case isCT(deprecated.Uint64):
			return nil, 0, fmt.Errorf("parquet type UINT64 is not supported yet")
		case isCT(deprecated.TimeMicros):
			return arrow.FixedWidthTypes.Time64us, convInt64, nil
		}
		return arrow.PrimitiveTypes.Int64, convInt64, nil
	case format.Int96:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, convInt96, nil
	case format.Float:
		return arrow.PrimitiveTypes.Float32, convFloat32, nil
	case format.Double:
		return arrow.PrimitiveTypes.Float64, convFloat64, nil
	case format.ByteArray:
		switch lt.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return arrow.BinaryTypes.String, convBytes, nil
		case nil:
		case *format.BsonType:
			return arrow.BinaryTypes.Binary, convBytes, nil
		default:
			return nil, 0, fmt.Errorf("parquet type BYTE_ARRAY %s is not supported yet", lt)
		}
		if isCT(deprecated.UTF8) || isCT(deprecated.Enum) || isCT(deprecated.Json) {
			return arrow.BinaryTypes.String, convBytes, nil
		}
		return arrow.BinaryTypes.Binary, convBytes, nil
	case format.FixedLenByteArray:
		switch lt.(type) {
		case nil, *format.UUIDType:
		default:
			return nil, 0, fmt.Errorf("parquet type FIXED_LEN_BYTE_ARRAY %s is not supported yet", lt)
		}
		if isCT(deprecated.Interval) {
			return nil, 0, fmt.Errorf("parquet type INTERVAL is not supported yet")
		}
		return arrow.BinaryTypes.Binary, convFixedBytes, nil
	}
	return nil, 0, fmt.Errorf("unknown parquet physical type %d", e.Type.V)
}

type decimalSpec struct{ Precision, Scale int32 }

func decimalOf(e *format.SchemaElement) (decimalSpec, bool) {
	if d, ok := e.LogicalType.Value.(*format.DecimalType); ok {
		return decimalSpec{d.Precision, d.Scale}, true
	}
	if e.ConvertedType.Valid && e.ConvertedType.V == deprecated.Decimal {
		return decimalSpec{e.Precision.V, e.Scale.V}, true
	}
	return decimalSpec{}, false
}

func timeUnit(u *format.TimeUnit) (arrow.TimeUnit, error) {
	switch u.Value.(type) {
	case *format.MilliSeconds:
		return arrow.Millisecond, nil
	case *format.MicroSeconds:
		return arrow.Microsecond, nil
	case *format.NanoSeconds:
		return arrow.Nanosecond, nil
	}
	return 0, fmt.Errorf("timestamp with unknown unit %q", u)
}

// bind decides how the file column fc is read as a table column of type
// want, or says why it cannot be.
func bind(path string, fc *fileColumn, want arrow.DataType) (binding, error) {
	if fc.err != nil {
		return binding{}, fc.err
	}
	b := binding{leaf: fc.leaf, conv: fc.conv, mul: 1, div: 1, typeLen: fc.typeLen, physical: fc.physical}
	if fc.optional {
		b.maxDef = 1
	}
	have := fc.typ
	mismatch := func() (binding, error) {
		return binding{}, fmt.Errorf("parquet: %s: column %s: declared %s but the file has %s", path, fc.name, want, have)
	}
	switch {
	case have.ID() == arrow.TIMESTAMP && want.ID() == arrow.TIMESTAMP:
		b.mul, b.div = unitScale(have.(*arrow.TimestampType).Unit, want.(*arrow.TimestampType).Unit)
	case arrow.TypeEqual(have, want):
	case have.ID() == arrow.INT32 && want.ID() == arrow.INT64 && fc.conv == convInt32:
		b.conv = convInt32ToInt64
	case have.ID() == arrow.FLOAT32 && want.ID() == arrow.FLOAT64:
		b.conv = convFloat32To64
	case fc.conv == convBytes && (want.ID() == arrow.STRING || want.ID() == arrow.BINARY):
		// Same bytes; only the label differs.
	default:
		return mismatch()
	}
	return b, nil
}

// unitScale is the factor from one timestamp unit to another.
func unitScale(from, to arrow.TimeUnit) (mul, div int64) {
	f := unitNanos(from)
	t := unitNanos(to)
	if f >= t {
		return f / t, 1
	}
	return 1, t / f
}

func unitNanos(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	}
	return 1
}

// findColumn resolves name in cols: an exact match first, then a
// case-insensitive one.
func findColumn(cols []fileColumn, name string) *fileColumn {
	for i := range cols {
		if cols[i].name == name {
			return &cols[i]
		}
	}
	for i := range cols {
		if strings.EqualFold(cols[i].name, name) {
			return &cols[i]
		}
	}
	return nil
}
