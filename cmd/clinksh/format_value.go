package main

import (
	"encoding/base64"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/clink-sql/clink/sqlvalue"
)

// appendFunc appends the rendering of the non-null value arr[i] to buf. One
// is chosen per column when a result's schema arrives, so the per-value work
// is a type assertion to the concrete array and a typed read: no value is
// boxed on the way to the output buffer.
type appendFunc func(arr arrow.Array, i int, buf []byte) []byte

// valueStyle is how values are spelled.
//
//   - styleText (table, csv, tsv): the canonical text of package sqlvalue,
//     shared with the kernel and CAST(x AS VARCHAR): 1.0, 1e+20, true,
//     2024-01-31 12:00:00.5, \x0aff, 1 month 2 days 03:00:00, ROW as
//     {a=1, b=x}, ARRAY as [1, 2], NULL inside them as NULL.
//   - styleJSON (json, ndjson): numbers and booleans as JSON numbers and
//     booleans in the same digits (decimals exactly, floats as above, NaN
//     and ±Inf as the strings "NaN", "Infinity", "-Infinity", which JSON has
//     no number for), strings JSON-quoted, binary as a base64 string (what
//     encoding/json and most JSON consumers expect for bytes), ROW as an
//     object, ARRAY as an array, NULL as null, and every other value (dates,
//     timestamps, intervals) as its canonical text in a JSON string.
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
	if style == styleText {
		return appendFunc(sqlvalue.Appender(dt))
	}
	return newJSONAppender(dt)
}

func newJSONAppender(dt arrow.DataType) appendFunc {
	switch t := dt.(type) {
	case *arrow.BooleanType, *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type, *arrow.Decimal128Type:
		return appendFunc(sqlvalue.Appender(dt)) // already a JSON literal
	case *arrow.Float32Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendJSONFloat(buf, float64(arr.(*array.Float32).Value(i)), 32)
		}
	case *arrow.Float64Type:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendJSONFloat(buf, arr.(*array.Float64).Value(i), 64)
		}
	case *arrow.StringType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendJSONString(buf, arr.(*array.String).Value(i))
		}
	case *arrow.LargeStringType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return appendJSONString(buf, arr.(*array.LargeString).Value(i))
		}
	case *arrow.BinaryType:
		return func(arr arrow.Array, i int, buf []byte) []byte {
			buf = append(buf, '"')
			buf = base64.StdEncoding.AppendEncode(buf, arr.(*array.Binary).Value(i))
			return append(buf, '"')
		}
	case *arrow.StructType:
		return appendFunc(jsonNesting.Struct(t))
	case *arrow.ListType:
		return appendFunc(jsonNesting.List(t.Elem()))
	case *arrow.DictionaryType:
		inner := newJSONAppender(t.ValueType)
		return func(arr arrow.Array, i int, buf []byte) []byte {
			d := arr.(*array.Dictionary)
			return inner(d.Dictionary(), d.GetValueIndex(i), buf)
		}
	case arrow.ExtensionType:
		inner := newJSONAppender(t.StorageType())
		return func(arr arrow.Array, i int, buf []byte) []byte {
			return inner(arr.(array.ExtensionArray).Storage(), i, buf)
		}
	case *arrow.TimestampType, *arrow.Date32Type, *arrow.Time32Type, *arrow.Time64Type, *arrow.MonthDayNanoIntervalType:
		// The canonical text in quotes: digits, signs, spaces, colons and
		// unit words never need escaping.
		text := sqlvalue.Appender(dt)
		return func(arr arrow.Array, i int, buf []byte) []byte {
			buf = append(buf, '"')
			buf = text(arr, i, buf)
			return append(buf, '"')
		}
	}
	// A type outside exec.Row's list: Arrow's own rendering, as a string.
	return func(arr arrow.Array, i int, buf []byte) []byte {
		return appendJSONString(buf, arr.ValueStr(i))
	}
}

// jsonNesting spells ROW as an object and ARRAY as an array.
var jsonNesting = sqlvalue.Nesting{
	Key:  func(buf []byte, name string) []byte { return append(appendJSONString(buf, name), ':') },
	Sep:  ",",
	Null: "null",
}

func init() {
	jsonNesting.Elem = func(t arrow.DataType) sqlvalue.AppendFunc { return sqlvalue.AppendFunc(newJSONAppender(t)) }
}

// appendJSONFloat is the canonical float text, which is a JSON number,
// except NaN and the infinities, which JSON gets as strings.
func appendJSONFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(buf, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(buf, `"-Infinity"`...)
	}
	return sqlvalue.AppendFloat(buf, f, bits)
}

const hexDigits = "0123456789abcdef"

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
