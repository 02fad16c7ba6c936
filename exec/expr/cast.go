package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Cast converts its input to another type. The policy, in one place: a
// value that cannot be converted is an error naming the value and the
// target type, never NULL and never a silently different value. (There is
// NULL-on-failure variant is TRY_CAST, NewTryCast; CAST of NULL is NULL.)
//
//	from \ to         INT/BIGINT           FLOAT/DOUBLE      DECIMAL(p,s)          VARCHAR         BOOLEAN      TIMESTAMP/DATE
//	INT/BIGINT        range-checked        exact or nearest  range-checked         digits          <> 0         -
//	FLOAT/DOUBLE      truncated toward 0;  FLOAT: range      HALF_UP at s via the  shortest form   -            -
//	                  range, NaN: error    checked           shortest decimal;     (Java layout)
//	                                                         range-checked
//	DECIMAL(p,s)      truncated toward 0;  nearest           HALF_UP at s;         exactly s       -            -
//	                  range-checked                          range-checked         digits
//	VARCHAR           trimmed, strict      trimmed, strict;  trimmed, strict;      -               true/false/  strict ISO forms
//	                  parse; range error   'Infinity' ok     HALF_UP; range error                  t/f/yes/no/  (below); invalid
//	                                                                                               y/n/1/0      date: error
//	BOOLEAN           1 / 0                -                 -                     TRUE / FALSE    -            -
//	TIMESTAMP/DATE    -                    -                 -                     ISO text        -            finer unit: range-
//	                                                                                                            checked; coarser:
//	                                                                                                            floor; DATE<->TS
//	BYTES             -                    -                 -                     raw bytes       -            -
//	JSON (extension)  -                    -                 -                     the text        -            -
//
// TIME(p) converts to and from VARCHAR ('HH:MM[:SS[.fffffffff]]', an
// optional leading date ignored as DuckDB does; text 12:34:56.5), between
// precisions (finer: exact; coarser: floor) and from TIMESTAMP (the time
// of day, floored to p); nothing else converts to or from it.
//
// "-" is "cannot cast", reported when the query is planned. In detail (the
// row path, castValue, is the definition; the columnar kernels reproduce
// it):
//
//   - integer narrowing, DOUBLE/DECIMAL to integer and DOUBLE to FLOAT
//     check the range and fail naming the value and the target type; a
//     fraction is truncated toward zero (CAST(2.7 AS INT) = 2, as in Flink);
//   - to DECIMAL(p,s) rounds HALF_UP at scale s and fails when more than p
//     digits are needed; DOUBLE goes through its shortest decimal form;
//   - strings are trimmed and parsed strictly (CAST('abc' AS INT) fails);
//     TIMESTAMP accepts 'YYYY-MM-DD[ HH:MM:SS[.fffffffff]]', with 'T' and a
//     trailing 'Z' also accepted, fraction digits beyond the type's
//     precision truncated; BOOLEAN accepts true/false/t/f/yes/no/y/n/1/0;
//   - to VARCHAR uses FormatValue (BYTES are taken as their raw bytes);
//   - TIMESTAMP to DATE takes the day (floor), DATE to TIMESTAMP midnight;
//   - BOOLEAN and integers convert as 1/0 and non-zero.
type Cast struct {
	e        Expr
	to       arrow.DataType
	implicit bool // inserted by type widening: prints as its input
}

// NewCast is CAST(e AS to). A constant input is converted at once, so an
// invalid constant is reported when the query is bound.
func NewCast(e Expr, to arrow.DataType) (Expr, error) { return newCast(e, to, false) }

func newCast(e Expr, to arrow.DataType, implicit bool) (Expr, error) {
	from := e.Type()
	if !canCast(from, to) {
		return nil, fmt.Errorf("cannot cast %s to %s", typeName(from), typeName(to))
	}
	if l, ok := e.(*Literal); ok {
		v, err := castValue(l.v, from, to)
		if err != nil {
			return nil, err
		}
		out := &Literal{v: v, t: to}
		if !implicit {
			out.text = fmt.Sprintf("CAST(%s AS %s)", l, typeName(to))
		}
		return out, nil
	}
	return &Cast{e: e, to: to, implicit: implicit}, nil
}

func canCast(from, to arrow.DataType) bool {
	switch {
	case isExtension(from) || isExtension(to):
		// A logical type converts only to and from its own storage: the
		// value is the same, only the label changes.
		return arrow.TypeEqual(StorageType(from), StorageType(to)) || isNull(from)
	case arrow.TypeEqual(from, to), isNull(from):
		return true
	case isNumeric(from) && isNumeric(to):
		return true
	case isString(to):
		return isNumeric(from) || isBool(from) || isTemporal(from) || isTime(from) || isInterval(from) || from.ID() == arrow.BINARY
	case isString(from):
		return isNumeric(to) || isBool(to) || isTemporal(to) || isTime(to) || isInterval(to) || to.ID() == arrow.BINARY
	case isTemporal(from) && isTemporal(to):
		return true
	case isTime(to):
		return isTime(from) || isTimestamp(from)
	case isBool(from) && isInt(to), isInt(from) && isBool(to):
		return true
	}
	return false
}

func (c *Cast) Type() arrow.DataType { return c.to }

func (c *Cast) String() string {
	if c.implicit {
		return c.e.String()
	}
	return fmt.Sprintf("CAST(%s AS %s)", c.e, typeName(c.to))
}

func (c *Cast) EvalRow(r exec.Row) (any, error) {
	v, err := c.e.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	return castValue(v, c.e.Type(), c.to)
}

func castErr(v any, from, to arrow.DataType, why string) error {
	return fmt.Errorf("CAST(%s AS %s): %s", sqlLiteral(v, from), typeName(to), why)
}

// castValue is the authoritative conversion of one non-NULL value.
func castValue(v any, from, to arrow.DataType) (any, error) {
	if v == nil || arrow.TypeEqual(StorageType(from), StorageType(to)) {
		return v, nil
	}
	switch to.ID() {
	case arrow.INT32, arrow.INT64:
		x, err := toInt64(v, from, to)
		if err != nil {
			return nil, err
		}
		if to.ID() == arrow.INT32 {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, castErr(v, from, to, "value out of range for INT")
			}
			return int32(x), nil
		}
		return x, nil
	case arrow.FLOAT64:
		return toFloat64(v, from, to)
	case arrow.FLOAT32:
		f, err := toFloat64(v, from, to)
		if err != nil {
			return nil, err
		}
		g := float32(f)
		if math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
			return nil, castErr(v, from, to, "value out of range for FLOAT")
		}
		return g, nil
	case arrow.DECIMAL128:
		d := to.(*arrow.Decimal128Type)
		return toDecimal(v, from, d)
	case arrow.STRING:
		if b, ok := v.([]byte); ok {
			return string(b), nil
		}
		return FormatValue(v, from), nil
	case arrow.BINARY:
		if s, ok := v.(string); ok {
			return []byte(s), nil
		}
	case arrow.BOOL:
		switch x := v.(type) {
		case int32:
			return x != 0, nil
		case int64:
			return x != 0, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "t", "yes", "y", "1":
				return true, nil
			case "false", "f", "no", "n", "0":
				return false, nil
			}
			return nil, castErr(v, from, to, "invalid BOOLEAN value")
		}
	case arrow.TIMESTAMP:
		u := to.(*arrow.TimestampType).Unit
		switch x := v.(type) {
		case string:
			ts, err := parseTimestamp(x, u)
			if err != nil {
				return nil, castErr(v, from, to, err.Error())
			}
			return ts, nil
		case arrow.Timestamp:
			return convertUnit(int64(x), from.(*arrow.TimestampType).Unit, u, v, from, to)
		case arrow.Date32:
			return convertUnit(int64(x)*86400, arrow.Second, u, v, from, to)
		}
	case arrow.TIME32, arrow.TIME64:
		u := timeUnit(to)
		switch x := v.(type) {
		case string:
			t, err := parseTime(x, u)
			if err != nil {
				return nil, castErr(v, from, to, err.Error())
			}
			return t, nil
		case arrow.Time64:
			return arrow.Time64(timeOfDay(timeUnit(from), u)(int64(x))), nil
		case arrow.Timestamp:
			return arrow.Time64(timeOfDay(from.(*arrow.TimestampType).Unit, u)(int64(x))), nil
		}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		if x, ok := v.(string); ok {
			iv, err := ParseInterval(x)
			if err != nil {
				return nil, castErr(v, from, to, err.Error())
			}
			return iv, nil
		}
	case arrow.DATE32:
		switch x := v.(type) {
		case string:
			d, err := parseDate(x)
			if err != nil {
				return nil, castErr(v, from, to, err.Error())
			}
			return d, nil
		case arrow.Timestamp:
			ups := unitsPerSecond(from.(*arrow.TimestampType).Unit)
			return arrow.Date32(floorDiv(int64(x), ups*86400)), nil
		}
	}
	return nil, fmt.Errorf("cannot cast %s to %s", typeName(from), typeName(to))
}

// timeOfDay returns the conversion of a date-time or time of unit from to
// a time of day of unit to: the ticks since the last midnight (floored, so
// a time before 1970 is still a time of that day), in the new unit
// (finer: exact, as a day fits any unit; coarser: floored).
func timeOfDay(from, to arrow.TimeUnit) func(int64) int64 {
	f, t := unitsPerSecond(from), unitsPerSecond(to)
	day := f * 86400
	return func(x int64) int64 {
		x -= floorDiv(x, day) * day
		if t >= f {
			return x * (t / f)
		}
		return x / (f / t)
	}
}

// convertUnit converts a timestamp between units: finer multiplies (and
// may overflow), coarser floors.
func convertUnit(x int64, from, to arrow.TimeUnit, v any, ft, tt arrow.DataType) (any, error) {
	f, t := unitsPerSecond(from), unitsPerSecond(to)
	if t >= f {
		m := t / f
		r := x * m
		if x != 0 && (r/m != x) {
			return nil, castErr(v, ft, tt, "value out of range for "+typeName(tt))
		}
		return arrow.Timestamp(r), nil
	}
	return arrow.Timestamp(floorDiv(x, f/t)), nil
}

func toInt64(v any, from, to arrow.DataType) (int64, error) {
	switch x := v.(type) {
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float32:
		return floatToInt64(float64(x), v, from, to)
	case float64:
		return floatToInt64(x, v, from, to)
	case decimal128.Num:
		q, ok := decTrunc(x, from.(*arrow.Decimal128Type).Scale)
		if !ok {
			return 0, castErr(v, from, to, "value out of range for "+typeName(to))
		}
		return q, nil
	case string:
		bitSize := 64
		if to.ID() == arrow.INT32 {
			bitSize = 32
		}
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, bitSize)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return 0, castErr(v, from, to, "value out of range for "+typeName(to))
			}
			return 0, castErr(v, from, to, "invalid "+typeName(to)+" value")
		}
		return n, nil
	}
	return 0, fmt.Errorf("cannot cast %s to %s", typeName(from), typeName(to))
}

// floatToInt64 truncates toward zero; out of range and NaN are errors.
func floatToInt64(f float64, v any, from, to arrow.DataType) (int64, error) {
	t := math.Trunc(f)
	if math.IsNaN(f) || t < -9.223372036854775808e18 || t >= 9.223372036854775808e18 {
		return 0, castErr(v, from, to, "value out of range for "+typeName(to))
	}
	return int64(t), nil
}

// decTrunc is the integer part of a decimal (truncated toward zero); ok is
// false when it does not fit int64.
func decTrunc(n num, scale int32) (int64, bool) {
	if fitsInt64(n) && scale <= 18 {
		return int64(n.LowBits()) / pow10Int[scale], true
	}
	q := new(big.Int).Quo(n.BigInt(), bigPow10(scale))
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

func toFloat64(v any, from, to arrow.DataType) (float64, error) {
	switch x := v.(type) {
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case decimal128.Num:
		return decToFloat(x, from.(*arrow.Decimal128Type).Scale), nil
	case string:
		bitSize := 64
		if to.ID() == arrow.FLOAT32 {
			bitSize = 32
		}
		s := strings.TrimSpace(x)
		switch s {
		case "Infinity", "+Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		f, err := strconv.ParseFloat(s, bitSize)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return 0, castErr(v, from, to, "value out of range for "+typeName(to))
			}
			return 0, castErr(v, from, to, "invalid "+typeName(to)+" value")
		}
		return f, nil
	}
	return 0, fmt.Errorf("cannot cast %s to %s", typeName(from), typeName(to))
}

func toDecimal(v any, from arrow.DataType, d *arrow.Decimal128Type) (any, error) {
	p, s := d.Precision, d.Scale
	overflow := func() error {
		return castErr(v, from, d, "value out of range for "+typeName(d))
	}
	switch x := v.(type) {
	case int32:
		return intToDec(int64(x), p, s, overflow)
	case int64:
		return intToDec(x, p, s, overflow)
	case float32:
		// Through float32's own shortest form: 0.1f is 0.1, not 0.100000001.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		n, err := floatToDec(f, p, s)
		if err != nil {
			return nil, overflow()
		}
		return n, nil
	case float64:
		n, err := floatToDec(x, p, s)
		if err != nil {
			return nil, overflow()
		}
		return n, nil
	case decimal128.Num:
		n, ok := decRescale(x, from.(*arrow.Decimal128Type).Scale, s)
		if !ok || !decFits(n, p) {
			return nil, overflow()
		}
		return n, nil
	case string:
		n, err := parseDecimal(x, p, s)
		if err != nil {
			if strings.Contains(err.Error(), "does not fit") {
				return nil, overflow()
			}
			return nil, castErr(v, from, d, "invalid "+typeName(d)+" value")
		}
		return n, nil
	}
	return nil, fmt.Errorf("cannot cast %s to %s", typeName(from), typeName(d))
}

func intToDec(x int64, p, s int32, overflow func() error) (any, error) {
	n, ok := decMul(decimal128.FromI64(x), pow10Num[s])
	if !ok || !decFits(n, p) {
		return nil, overflow()
	}
	return n, nil
}

func (c *Cast) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	in, err := c.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	return castArray(mem, in, c.e.Type(), c.to)
}
