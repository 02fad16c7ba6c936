package main

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// appendFunc appends the rendering of the non-null value arr[i] to buf. One
// is chosen per column when a result's schema arrives, so the per-value work
// is a type assertion to the concrete array and a typed read: no value is
// boxed on the way to the output buffer.
type appendFunc func(arr arrow.Array, i int, buf []byte) []byte

// valueStyle is how values are spelled.
//
//   - styleText (table, csv, tsv): strings raw, binary as PostgreSQL's bytea
//     hex form \x0aff, ROW as {a=1, b=x}, ARRAY as [1, 2], NULL inside them as NULL.
//   - styleJSON (json, ndjson): strings JSON-quoted, binary as a base64 string
//     (what encoding/json and most JSON consumers expect for bytes), ROW as an
//     object, ARRAY as an array, NULL as null, NaN/±Inf as the strings
//     "NaN"/"Infinity"/"-Infinity", decimals as numbers with their exact digits.
//
// Both styles share: integers in decimal, floats in the shortest form that
// round-trips (exponent only below 1e-6 or from 1e21, like JavaScript),
// decimals with exactly the type's scale, timestamps as
// YYYY-MM-DD HH:MM:SS[.fraction] (fraction only when non-zero, at the
// type's precision with trailing zeros trimmed; in the type's time zone
// when it names one, else UTC), dates as YYYY-MM-DD.
type valueStyle int

const (
	styleText valueStyle = iota
	styleJSON
)

// columnAppenders chooses the appender of every column of schema.
func columnAppenders(schema *arrow.Schema, style valueStyle) []appendFunc {
	fns := make([]appendFunc, schema.NumFields())
	for i, f := range schema.Fields() {
		fns[i] = newAppender(f.Type, style)
	}
	return fns
}

// newAppender returns the appender for values of type dt.
func newAppender(dt arrow.DataType, style valueStyle) appendFunc {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return strconv.AppendBool(buf, arr.(*array.Boolean).Value(i))
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
			return appendFloat(buf, float64(arr.(*array.Float32).Value(i)), 32, style)
		}
	case *arrow.Float64Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendFloat(buf, arr.(*array.Float64).Value(i), 64, style)
		}
	case *arrow.Decimal128Type:
		scale := t.Scale
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendDecimal(buf, arr.(*array.Decimal128).Value(i), scale)
		}
	case *arrow.StringType:
		if style == styleJSON {
			return func(arr arrow.Array, i int, buf []byte) []byte {
				return appendJSONString(buf, arr.(*array.String).Value(i))
			}
		}
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return append(buf, arr.(*array.String).Value(i)...)
		}
	case *arrow.LargeStringType:
		if style == styleJSON {
			return func(arr arrow.Array, i int, buf []byte) []byte {
				return appendJSONString(buf, arr.(*array.LargeString).Value(i))
			}
		}
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return append(buf, arr.(*array.LargeString).Value(i)...)
		}
	case *arrow.BinaryType:
		if style == styleJSON {
			return func(arr arrow.Array, i int, buf []byte) []byte {
				v := arr.(*array.Binary).Value(i)
				buf = append(buf, '"')
				buf = base64.StdEncoding.AppendEncode(buf, v)
				return append(buf, '"')
			}
		}
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendHexBytes(buf, arr.(*array.Binary).Value(i))
		}
	case *arrow.TimestampType:
		return newTimestampAppender(t, style)
	case *arrow.Date32Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			if style == styleJSON {
				buf = append(buf, '"')
			}
			days := int64(arr.(*array.Date32).Value(i))
			buf = appendDate(buf, time.Unix(days*86400, 0).UTC())
			if style == styleJSON {
				buf = append(buf, '"')
			}
			return buf
		}
	case *arrow.StructType:
		return newStructAppender(t, style)
	case *arrow.ListType:
		return newListAppender(t.Elem(), style)
	case *arrow.DictionaryType:
		inner := newAppender(t.ValueType, style)
		return func(arr arrow.Array, i int, buf []byte) []byte {
			d := arr.(*array.Dictionary)
			return inner(d.Dictionary(), d.GetValueIndex(i), buf)
		}
	}
	// A type outside exec.Row's list: arrow's own rendering, so the shell
	// shows something rather than failing the query.
	if style == styleJSON {
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendJSONString(buf, arr.ValueStr(i))
		}
	}
	return func(arr arrow.Array, i int, buf []byte) []byte {
		return append(buf, arr.ValueStr(i)...)
	}
}

// nullable wraps fn for a nested position (a ROW field, an ARRAY element),
// where the caller cannot check for NULL itself.
func nullable(fn appendFunc, style valueStyle) appendFunc {
	null := "NULL"
	if style == styleJSON {
		null = "null"
	}
	return func(arr arrow.Array, i int, buf []byte) []byte {
		if arr.IsNull(i) {
			return append(buf, null...)
		}
		return fn(arr, i, buf)
	}
}

func newStructAppender(t *arrow.StructType, style valueStyle) appendFunc {
	fields := make([]appendFunc, t.NumFields())
	keys := make([][]byte, t.NumFields())
	for f, field := range t.Fields() {
		fields[f] = nullable(newAppender(field.Type, style), style)
		if style == styleJSON {
			keys[f] = append(appendJSONString(nil, field.Name), ':')
		} else {
			keys[f] = append([]byte(field.Name), '=')
		}
	}
	sep := ", "
	if style == styleJSON {
		sep = ","
	}
	return func(arr arrow.Array, i int, buf []byte) []byte {
		s := arr.(*array.Struct)
		buf = append(buf, '{')
		for f, fn := range fields {
			if f > 0 {
				buf = append(buf, sep...)
			}
			buf = append(buf, keys[f]...)
			buf = fn(s.Field(f), i, buf)
		}
		return append(buf, '}')
	}
}

func newListAppender(elem arrow.DataType, style valueStyle) appendFunc {
	fn := nullable(newAppender(elem, style), style)
	sep := ", "
	if style == styleJSON {
		sep = ","
	}
	return func(arr arrow.Array, i int, buf []byte) []byte {
		l := arr.(*array.List)
		start, end := l.ValueOffsets(i)
		vals := l.ListValues()
		buf = append(buf, '[')
		for j := start; j < end; j++ {
			if j > start {
				buf = append(buf, sep...)
			}
			buf = fn(vals, int(j), buf)
		}
		return append(buf, ']')
	}
}

// appendFloat renders f like encoding/json does (shortest round-trip
// digits, exponent only for very small or large magnitudes). NaN and the
// infinities are not JSON numbers, so JSON gets them as strings.
func appendFloat(buf []byte, f float64, bits int, style valueStyle) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		s := "NaN"
		if math.IsInf(f, 1) {
			s = "Infinity"
		} else if math.IsInf(f, -1) {
			s = "-Infinity"
		}
		if style == styleJSON {
			buf = append(buf, '"')
			buf = append(buf, s...)
			return append(buf, '"')
		}
		return append(buf, s...)
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			fmt = 'e'
		}
	}
	buf = strconv.AppendFloat(buf, f, fmt, -1, bits)
	if fmt == 'e' {
		// 1e-07 -> 1e-7, as encoding/json writes it.
		n := len(buf)
		if n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// appendDecimal renders n with exactly scale fractional digits. Values that
// fit an int64 (nearly all) are rendered without allocating.
func appendDecimal(buf []byte, n decimal128.Num, scale int32) []byte {
	var digits []byte
	var stack [40]byte
	neg := n.Sign() < 0
	hi, lo := n.HighBits(), n.LowBits()
	if (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63) {
		v := int64(lo)
		u := uint64(v)
		if v < 0 {
			u = uint64(-v) // -MinInt64 wraps to itself, which is its magnitude as uint64
		}
		digits = strconv.AppendUint(stack[:0], u, 10)
	} else {
		b := n.BigInt()
		digits = b.Abs(b).Append(stack[:0], 10)
	}
	if neg {
		buf = append(buf, '-')
	}
	if scale <= 0 {
		buf = append(buf, digits...)
		for k := int32(0); k < -scale; k++ {
			buf = append(buf, '0')
		}
		return buf
	}
	s := int(scale)
	if len(digits) <= s {
		buf = append(buf, '0', '.')
		for k := len(digits); k < s; k++ {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	buf = append(buf, digits[:len(digits)-s]...)
	buf = append(buf, '.')
	return append(buf, digits[len(digits)-s:]...)
}

func newTimestampAppender(t *arrow.TimestampType, style valueStyle) appendFunc {
	loc := time.UTC
	if t.TimeZone != "" {
		if l, err := t.GetZone(); err == nil && l != nil {
			loc = l
		}
	}
	// per: units per second; width: fraction digits at the unit's precision.
	var per int64
	var width int
	switch t.Unit {
	case arrow.Second:
		per, width = 1, 0
	case arrow.Millisecond:
		per, width = 1e3, 3
	case arrow.Microsecond:
		per, width = 1e6, 6
	default:
		per, width = 1e9, 9
	}
	nanosPerUnit := int64(1e9) / per
	return func(arr arrow.Array, i int, buf []byte) []byte {
		v := int64(arr.(*array.Timestamp).Value(i))
		sec, frac := v/per, v%per
		if frac < 0 {
			sec--
			frac += per
		}
		tm := time.Unix(sec, frac*nanosPerUnit).In(loc)
		if style == styleJSON {
			buf = append(buf, '"')
		}
		buf = appendDate(buf, tm)
		buf = append(buf, ' ')
		h, m, s := tm.Clock()
		buf = append2(buf, h)
		buf = append(buf, ':')
		buf = append2(buf, m)
		buf = append(buf, ':')
		buf = append2(buf, s)
		if frac != 0 {
			var d [9]byte
			f := frac
			for k := width - 1; k >= 0; k-- {
				d[k] = byte('0' + f%10)
				f /= 10
			}
			n := width
			for n > 0 && d[n-1] == '0' {
				n--
			}
			buf = append(buf, '.')
			buf = append(buf, d[:n]...)
		}
		if style == styleJSON {
			buf = append(buf, '"')
		}
		return buf
	}
}

// appendDate writes YYYY-MM-DD.
func appendDate(buf []byte, tm time.Time) []byte {
	y, mo, d := tm.Date()
	if y < 0 {
		buf = append(buf, '-')
		y = -y
	}
	for p := 1000; p > 1 && y < p; p /= 10 {
		buf = append(buf, '0')
	}
	buf = strconv.AppendInt(buf, int64(y), 10)
	buf = append(buf, '-')
	buf = append2(buf, int(mo))
	buf = append(buf, '-')
	return append2(buf, d)
}

func append2(buf []byte, v int) []byte {
	return append(buf, byte('0'+v/10), byte('0'+v%10))
}

const hexDigits = "0123456789abcdef"

// appendHexBytes writes b in PostgreSQL's bytea hex output form: \x then two
// lower-case hex digits per byte.
func appendHexBytes(buf []byte, b []byte) []byte {
	buf = append(buf, '\\', 'x')
	for _, c := range b {
		buf = append(buf, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return buf
}

// appendJSONString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; <, > and & are left alone (no HTML escaping).
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript parsers.
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
