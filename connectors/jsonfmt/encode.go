package jsonfmt

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Encoder writes rows of Arrow records as JSON objects, straight from the
// columns (no row form). Timestamps use Flink's SQL format, so what the
// decoder reads back is what was written.
type Encoder struct {
	keys [][]byte // `"name":` per column, quoted once
}

// NewEncoder returns an encoder for records of schema.
func NewEncoder(schema *arrow.Schema) *Encoder {
	e := &Encoder{}
	for _, f := range schema.Fields() {
		e.keys = append(e.keys, append(appendString(nil, f.Name), ':'))
	}
	return e
}

// AppendRow appends row i of rec as one JSON object (no newline).
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	dst = append(dst, '{')
	for c, k := range e.keys {
		if c > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, k...)
		dst = appendValue(dst, rec.Column(c), i)
	}
	return append(dst, '}')
}

func appendValue(dst []byte, arr arrow.Array, i int) []byte {
	if arr.IsNull(i) {
		return append(dst, "null"...)
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i))
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10)
	case *array.Float32:
		return appendFloat(dst, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(dst, a.Value(i), 64)
	case *array.Decimal128:
		t := a.DataType().(*arrow.Decimal128Type)
		return append(dst, a.Value(i).ToString(t.Scale)...)
	case *array.String:
		return appendString(dst, a.Value(i))
	case *array.Binary:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, a.Value(i))
		return append(dst, '"')
	case *array.Timestamp:
		dst = append(dst, '"')
		dst = appendTimestamp(dst, int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit)
		return append(dst, '"')
	case *array.Date32:
		dst = append(dst, '"')
		dst = a.Value(i).ToTime().AppendFormat(dst, "2006-01-02")
		return append(dst, '"')
	case *array.Struct:
		t := a.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, t.Field(f).Name)
			dst = append(dst, ':')
			dst = appendValue(dst, a.Field(f), i)
		}
		return append(dst, '}')
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		dst = append(dst, '[')
		for j := start; j < end; j++ {
			if j > start {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, vals, int(j))
		}
		return append(dst, ']')
	}
	return appendString(dst, arr.ValueStr(i))
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// JSON has no literal for these; a string is what Flink writes and
		// what the row decode reads back.
		return appendString(dst, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
