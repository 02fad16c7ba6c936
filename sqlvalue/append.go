package sqlvalue

import (
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// AppendFunc appends the canonical text of the non-NULL value arr[i] to
// buf. One is chosen per column (Appender), so the per-value work is a type
// assertion and a typed read: no value is boxed on the way out.
type AppendFunc func(arr arrow.Array, i int, buf []byte) []byte

// Appender returns the AppendFunc for columns of type t. Nested values
// (ROW, ARRAY) spell a NULL inside them as NULL.
func Appender(t arrow.DataType) AppendFunc {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendBool(buf, arr.(*array.Boolean).Value(i))
		}
	case *arrow.Int8Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendInt(buf, int64(arr.(*array.Int8).Value(i)), 10)
		}
	case *arrow.Int16Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendInt(buf, int64(arr.(*array.Int16).Value(i)), 10)
		}
	case *arrow.Int32Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendInt(buf, int64(arr.(*array.Int32).Value(i)), 10)
		}
	case *arrow.Int64Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendInt(buf, arr.(*array.Int64).Value(i), 10)
		}
	case *arrow.Uint8Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendUint(buf, uint64(arr.(*array.Uint8).Value(i)), 10)
		}
	case *arrow.Uint16Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendUint(buf, uint64(arr.(*array.Uint16).Value(i)), 10)
		}
	case *arrow.Uint32Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendUint(buf, uint64(arr.(*array.Uint32).Value(i)), 10)
		}
	case *arrow.Uint64Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendUint(buf, arr.(*array.Uint64).Value(i), 10)
		}
	case *arrow.Float32Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendFloat(buf, float64(arr.(*array.Float32).Value(i)), 32)
		}
	case *arrow.Float64Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendFloat(buf, arr.(*array.Float64).Value(i), 64)
		}
	case *arrow.Decimal128Type:
		scale := t.Scale
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendDecimal(buf, arr.(*array.Decimal128).Value(i), scale)
		}
	case *arrow.StringType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return append(buf, arr.(*array.String).Value(i)...)
		}
	case *arrow.LargeStringType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return append(buf, arr.(*array.LargeString).Value(i)...)
		}
	case *arrow.BinaryType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendBytes(buf, arr.(*array.Binary).Value(i))
		}
	case *arrow.TimestampType:
		u := t.Unit
		if loc := zone(t); loc != nil {
			return func(arr arrow.Array, i int, buf []byte) []byte {
				return AppendTimestampIn(buf, int64(arr.(*array.Timestamp).Value(i)), u, loc)
			}
		}
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendTimestamp(buf, int64(arr.(*array.Timestamp).Value(i)), u)
		}
	case *arrow.Date32Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendDate(buf, int64(arr.(*array.Date32).Value(i)))
		}
	case *arrow.MonthDayNanoIntervalType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendInterval(buf, arr.(*array.MonthDayNanoInterval).Value(i))
		}
	case *arrow.Time32Type:
		u := t.Unit
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendTime(buf, int64(arr.(*array.Time32).Value(i)), u)
		}
	case *arrow.Time64Type:
		u := t.Unit
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return AppendTime(buf, int64(arr.(*array.Time64).Value(i)), u)
		}
	case *arrow.StructType:
		return canonical.Struct(t)
	case *arrow.ListType:
		return canonical.List(t.Elem())
	case *arrow.DictionaryType:
		inner := Appender(t.ValueType)
		return func(arr arrow.Array, i int, buf []byte) []byte {
			d := arr.(*array.Dictionary)
			return inner(d.Dictionary(), d.GetValueIndex(i), buf)
		}
	case arrow.ExtensionType:
		inner := Appender(t.StorageType())
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return inner(arr.(array.ExtensionArray).Storage(), i, buf)
		}
	}
	// A type outside exec.Row's list: Arrow's own rendering, so something
	// shows rather than the query failing.
	return func(arr arrow.Array, i int, buf []byte) []byte {
		return append(buf, arr.ValueStr(i)...)
	}
}

// TimeUnitOf is the unit of a TIME type (Time32 or Time64); microseconds,
// TIME's default precision, for any other type.
func TimeUnitOf(t arrow.DataType) arrow.TimeUnit {
	switch t := t.(type) {
	case *arrow.Time32Type:
		return t.Unit
	case *arrow.Time64Type:
		return t.Unit
	}
	return arrow.Microsecond
}

func zone(t *arrow.TimestampType) *time.Location {
	if t.TimeZone == "" {
		return nil
	}
	if l, err := t.GetZone(); err == nil && l != nil {
		return l
	}
	return nil
}

// Nesting is how ROW and ARRAY values are spelled around their elements:
// the canonical text writes {a=1, b=x} and [1, NULL]; the shell's JSON
// output writes {"a":1,"b":"x"} and [1,null] with the same walk.
type Nesting struct {
	Key  func(buf []byte, name string) []byte // a ROW field's name and separator
	Sep  string                               // between elements
	Null string                               // a NULL element
	Elem func(arrow.DataType) AppendFunc      // the appender of an element's type
}

var canonical = Nesting{
	Key:  func(buf []byte, name string) []byte { return append(append(buf, name...), '=') },
	Sep:  ", ",
	Null: "NULL",
}

func init() { canonical.Elem = Appender } // Appender refers to canonical

// IsNull reports whether arr[i] is NULL. An array of Arrow's null type (an
// untyped NULL: SELECT NULL) has no validity bitmap, so its IsNull says
// false for every value; here it is NULL, as it is in SQL.
func IsNull(arr arrow.Array, i int) bool {
	return arr.IsNull(i) || arr.DataType().ID() == arrow.NULL
}

func (n Nesting) elem(t arrow.DataType) AppendFunc {
	fn := n.Elem(t)
	return func(arr arrow.Array, i int, buf []byte) []byte {
		if IsNull(arr, i) {
			return append(buf, n.Null...)
		}
		return fn(arr, i, buf)
	}
}

// Struct is the appender of a ROW column.
func (n Nesting) Struct(t *arrow.StructType) AppendFunc {
	fields := make([]AppendFunc, t.NumFields())
	keys := make([][]byte, t.NumFields())
	for f, field := range t.Fields() {
		fields[f] = n.elem(field.Type)
		keys[f] = n.Key(nil, field.Name)
	}
	return func(arr arrow.Array, i int, buf []byte) []byte {
		s := arr.(*array.Struct)
		buf = append(buf, '{')
		for f, fn := range fields {
			if f > 0 {
				buf = append(buf, n.Sep...)
			}
			buf = append(buf, keys[f]...)
			buf = fn(s.Field(f), i, buf)
		}
		return append(buf, '}')
	}
}

// List is the appender of an ARRAY column of elem.
func (n Nesting) List(elem arrow.DataType) AppendFunc {
	fn := n.elem(elem)
	return func(arr arrow.Array, i int, buf []byte) []byte {
		l := arr.(*array.List)
		start, end := l.ValueOffsets(i)
		vals := l.ListValues()
		buf = append(buf, '[')
		for j := start; j < end; j++ {
			if j > start {
				buf = append(buf, n.Sep...)
			}
			buf = fn(vals, int(j), buf)
		}
		return append(buf, ']')
	}
}

// Append appends the canonical text of a row-form value v of type t (the
// Go types of exec.Row: bool, int32, int64, float32, float64,
// decimal128.Num, string, []byte, arrow.Timestamp, arrow.Date32,
// arrow.Time64, arrow.MonthDayNanoInterval, []any for ROW and ARRAY).
// isNull reports
// SQL NULL, for which nothing is appended.
func Append(buf []byte, v any, t arrow.DataType) (out []byte, isNull bool) {
	switch x := v.(type) {
	case nil:
		return buf, true
	case bool:
		return AppendBool(buf, x), false
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), false
	case int64:
		return strconv.AppendInt(buf, x, 10), false
	case float32:
		return AppendFloat(buf, float64(x), 32), false
	case float64:
		return AppendFloat(buf, x, 64), false
	case decimal128.Num:
		var s int32
		if d, ok := t.(*arrow.Decimal128Type); ok {
			s = d.Scale
		}
		return AppendDecimal(buf, x, s), false
	case string:
		return append(buf, x...), false
	case []byte:
		return AppendBytes(buf, x), false
	case arrow.Timestamp:
		u := arrow.Microsecond
		if ts, ok := t.(*arrow.TimestampType); ok {
			return AppendTimestampIn(buf, int64(x), ts.Unit, zone(ts)), false
		}
		return AppendTimestamp(buf, int64(x), u), false
	case arrow.Date32:
		return AppendDate(buf, int64(x)), false
	case arrow.Time64:
		return AppendTime(buf, int64(x), TimeUnitOf(t)), false
	case arrow.MonthDayNanoInterval:
		return AppendInterval(buf, x), false
	case []any:
		return appendNested(buf, x, t), false
	}
	return append(buf, "?"...), false
}

// appendNested spells a ROW ({a=1, b=x}) or an ARRAY ([1, 2]) in row form.
func appendNested(buf []byte, x []any, t arrow.DataType) []byte {
	if st, ok := t.(*arrow.StructType); ok {
		buf = append(buf, '{')
		for i, f := range x {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			var ft arrow.DataType = arrow.Null
			if i < st.NumFields() {
				buf = append(buf, st.Field(i).Name...)
				buf = append(buf, '=')
				ft = st.Field(i).Type
			}
			buf = appendOrNull(buf, f, ft)
		}
		return append(buf, '}')
	}
	var et arrow.DataType = arrow.Null
	if lt, ok := t.(*arrow.ListType); ok {
		et = lt.Elem()
	}
	buf = append(buf, '[')
	for i, e := range x {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = appendOrNull(buf, e, et)
	}
	return append(buf, ']')
}

func appendOrNull(buf []byte, v any, t arrow.DataType) []byte {
	out, null := Append(buf, v, t)
	if null {
		return append(out, "NULL"...)
	}
	return out
}

// Format is Append into a new string.
func Format(v any, t arrow.DataType) (text string, isNull bool) {
	var tmp [64]byte
	b, null := Append(tmp[:0], v, t)
	return string(b), null
}
