package expr

import (
	"fmt"

	"github.com/clink-sql/clink/sqlvalue"

	"github.com/apache/arrow-go/v18/arrow"
)

// maxPrecision is the widest DECIMAL (DECIMAL128).
const maxPrecision = 38

// minAdjustedScale is the scale Flink keeps at least when a DECIMAL result
// must be narrowed to fit 38 digits (LogicalTypeMerging.adjustPrecisionScale).
const minAdjustedScale = 6

// typeName renders t as the SQL type name users see in error messages:
// the one spelling of package sqlvalue.
func typeName(t arrow.DataType) string {
	if t == nil {
		return "<nil>"
	}
	return sqlvalue.TypeName(t)
}

func tsPrecision(u arrow.TimeUnit) int { return sqlvalue.UnitPrecision(u) }

func isInt(t arrow.DataType) bool {
	return t.ID() == arrow.INT32 || t.ID() == arrow.INT64
}

func isFloat(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64
}

func isDecimal(t arrow.DataType) bool { return t.ID() == arrow.DECIMAL128 }

func isNumeric(t arrow.DataType) bool { return isInt(t) || isFloat(t) || isDecimal(t) }

func isString(t arrow.DataType) bool { return t.ID() == arrow.STRING }

func isTemporal(t arrow.DataType) bool {
	return t.ID() == arrow.TIMESTAMP || t.ID() == arrow.DATE32
}

// isTime is TIME(p): Time32 for p <= 3, Time64 above (sql.TypeOf). A time
// of day is not "temporal" above: it has no date, so the DATE and
// TIMESTAMP rules (casts between them, date functions) do not apply to it.
func isTime(t arrow.DataType) bool { return t.ID() == arrow.TIME32 || t.ID() == arrow.TIME64 }

// timeType is the TIME type of a unit, as sql.TypeOf lays TIME(p) out.
func timeType(u arrow.TimeUnit) arrow.DataType {
	switch u {
	case arrow.Second:
		return arrow.FixedWidthTypes.Time32s
	case arrow.Millisecond:
		return arrow.FixedWidthTypes.Time32ms
	case arrow.Microsecond:
		return arrow.FixedWidthTypes.Time64us
	}
	return arrow.FixedWidthTypes.Time64ns
}

// timeUnit is the unit of a TIME type.
func timeUnit(t arrow.DataType) arrow.TimeUnit { return sqlvalue.TimeUnitOf(t) }

func isNull(t arrow.DataType) bool { return t.ID() == arrow.NULL }

func isBool(t arrow.DataType) bool { return t.ID() == arrow.BOOL }

// decParts returns precision and scale of a decimal, or the decimal an
// integer widens to when it meets a decimal: INT is DECIMAL(10,0) and
// BIGINT DECIMAL(19,0), as in Flink.
func decParts(t arrow.DataType) (p, s int32) {
	switch t.ID() {
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return d.Precision, d.Scale
	case arrow.INT32:
		return 10, 0
	case arrow.INT64:
		return 19, 0
	}
	return maxPrecision, 0
}

func decType(p, s int32) *arrow.Decimal128Type {
	return &arrow.Decimal128Type{Precision: p, Scale: s}
}

// adjustDecimal narrows a result type wider than 38 digits the way Flink
// does: keep the integer digits, give up scale but never below 6.
func adjustDecimal(p, s int32) *arrow.Decimal128Type {
	if p <= maxPrecision {
		return decType(p, s)
	}
	intDigits := p - s
	minScale := min(s, minAdjustedScale)
	return decType(maxPrecision, max(maxPrecision-intDigits, minScale))
}

// finerUnit is the finer of two timestamp units: comparing or merging
// timestamps happens in the unit that loses nothing.
func finerUnit(a, b arrow.TimeUnit) arrow.TimeUnit {
	if a > b {
		return a
	}
	return b
}

// CommonType is the type two values are widened to when they meet in a
// UNION, CASE, IN or comparison. Integers widen to the wider integer, an
// integer meeting a decimal becomes a decimal holding both, anything
// meeting a float becomes DOUBLE (FLOAT with FLOAT stays FLOAT), timestamps
// and times take the finer unit, DATE meeting TIMESTAMP becomes TIMESTAMP,
// and a string meeting a DATE, TIMESTAMP or TIME is read as that type. NULL
// meets anything.
func CommonType(a, b arrow.DataType) (arrow.DataType, error) {
	switch {
	case arrow.TypeEqual(a, b):
		return a, nil
	case isNull(a):
		return b, nil
	case isNull(b):
		return a, nil
	case isInt(a) && isInt(b):
		if a.ID() == arrow.INT64 || b.ID() == arrow.INT64 {
			return arrow.PrimitiveTypes.Int64, nil
		}
		return arrow.PrimitiveTypes.Int32, nil
	case isNumeric(a) && isNumeric(b) && (isFloat(a) || isFloat(b)):
		if a.ID() == arrow.FLOAT32 && b.ID() == arrow.FLOAT32 {
			return arrow.PrimitiveTypes.Float32, nil
		}
		return arrow.PrimitiveTypes.Float64, nil
	case isNumeric(a) && isNumeric(b):
		p1, s1 := decParts(a)
		p2, s2 := decParts(b)
		s := max(s1, s2)
		p := max(p1-s1, p2-s2) + s
		if p > maxPrecision {
			// Keep the integer digits; a value that needs them all still fits.
			s = max(0, s-(p-maxPrecision))
			p = maxPrecision
		}
		return decType(p, s), nil
	case a.ID() == arrow.TIMESTAMP && b.ID() == arrow.TIMESTAMP:
		u := finerUnit(a.(*arrow.TimestampType).Unit, b.(*arrow.TimestampType).Unit)
		return &arrow.TimestampType{Unit: u}, nil
	case a.ID() == arrow.TIMESTAMP && b.ID() == arrow.DATE32:
		return a, nil
	case a.ID() == arrow.DATE32 && b.ID() == arrow.TIMESTAMP:
		return b, nil
	case isTime(a) && isTime(b):
		return timeType(finerUnit(timeUnit(a), timeUnit(b))), nil
	case (isTemporal(a) || isTime(a)) && isString(b):
		return a, nil
	case isString(a) && (isTemporal(b) || isTime(b)):
		return b, nil
	}
	return nil, fmt.Errorf("incompatible types %s and %s", typeName(a), typeName(b))
}

// Coerce is the implicit widening used by UNION, CASE and IN: e unchanged
// when it already has type to, else an implicit cast (which prints as e).
// A literal is converted at once, so no cast runs per row.
func Coerce(e Expr, to arrow.DataType) (Expr, error) {
	if arrow.TypeEqual(e.Type(), to) {
		return e, nil
	}
	c, err := newCast(e, to, true)
	if err != nil {
		return nil, err
	}
	return c, nil
}
