package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Row is the row form of one record: one Go value per column, nil for SQL
// NULL. The Go type of each value is fixed by the column's Arrow type:
//
//	BOOL                 bool
//	INT32 (INT)          int32
//	INT64 (BIGINT)       int64
//	FLOAT32 (FLOAT)      float32
//	FLOAT64 (DOUBLE)     float64
//	DECIMAL128(p,s)      decimal128.Num (scale from the type)
//	STRING (VARCHAR)     string
//	BINARY               []byte
//	TIMESTAMP(unit)      arrow.Timestamp (in the type's unit)
//	DATE32               arrow.Date32
//	TIME32, TIME64       arrow.Time64 (in the type's unit; a TIME(0..3) column
//	(TIME(p))            is Time32 in Arrow, its row values are widened)
//	INTERVAL             arrow.MonthDayNanoInterval (months, days, nanoseconds
//	                     kept apart: '1 month' is not '30 days')
//	STRUCT (ROW<...>)    Row (one value per field)
//	LIST (ARRAY<...>)    []any
//
// The row path is the authoritative one: it is slow by design (a box per
// value) and exists so every operator has an answer that needs no Arrow.
type Row []any

// DecodeRows decodes every row of rec: the materialisation of a columnar
// batch. It is called once per batch, by Batch.Rows.
func DecodeRows(rec arrow.RecordBatch) []Row {
	n := int(rec.NumRows())
	ncol := int(rec.NumCols())
	rows := make([]Row, n)
	// One backing slice for all rows: one allocation instead of n.
	cells := make([]any, n*ncol)
	for i := range rows {
		rows[i] = cells[i*ncol : (i+1)*ncol : (i+1)*ncol]
	}
	for c := 0; c < ncol; c++ {
		col := rec.Column(c)
		for i := 0; i < n; i++ {
			rows[i][c] = Value(col, i)
		}
	}
	return rows
}

// Value returns the row-form value of arr[i] (nil when null).
func Value(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Int8:
		return int32(a.Value(i))
	case *array.Int16:
		return int32(a.Value(i))
	case *array.Uint8:
		return int32(a.Value(i))
	case *array.Uint16:
		return int32(a.Value(i))
	case *array.Uint32:
		return int64(a.Value(i))
	case *array.Uint64:
		return int64(a.Value(i))
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		// Cloned, like BINARY below: a row outlives its batch in operator
		// state, and Arrow memory may be reused once released (the JSON
		// decoder recycles its buffers).
		return strings.Clone(a.Value(i))
	case *array.LargeString:
		return strings.Clone(a.Value(i))
	case *array.Binary:
		// Copy: the row must not alias Arrow memory that is released later.
		return append([]byte(nil), a.Value(i)...)
	case *array.Timestamp:
		return a.Value(i)
	case *array.Date32:
		return a.Value(i)
	case *array.Time64:
		return a.Value(i)
	case *array.Time32:
		return arrow.Time64(a.Value(i))
	case *array.MonthDayNanoInterval:
		return a.Value(i)
	case *array.Dictionary:
		return Value(a.Dictionary(), a.GetValueIndex(i))
	case array.ExtensionArray:
		return Value(a.Storage(), i)
	case *array.Struct:
		r := make(Row, a.NumField())
		for f := range r {
			r[f] = Value(a.Field(f), i)
		}
		return r
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, Value(vals, int(j)))
		}
		return out
	default:
		return fmt.Sprintf("%v", arr.ValueStr(i))
	}
}

// AppendValue appends a row-form value to a builder of the matching type.
// It is the one row-to-Arrow cell mapping, shared by every operator that
// builds born-columnar output from row values, so the carriers cannot drift.
func AppendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Int32Builder:
		x, ok := v.(int32)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Float32Builder:
		x, ok := v.(float32)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Decimal128Builder:
		x, ok := v.(decimal128.Num)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.TimestampBuilder:
		x, ok := v.(arrow.Timestamp)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Date32Builder:
		x, ok := v.(arrow.Date32)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Time64Builder:
		x, ok := v.(arrow.Time64)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.Time32Builder:
		x, ok := v.(arrow.Time64)
		if !ok || x != arrow.Time64(arrow.Time32(x)) {
			return typeErr(b, v)
		}
		bb.Append(arrow.Time32(x))
	case *array.MonthDayNanoIntervalBuilder:
		x, ok := v.(arrow.MonthDayNanoInterval)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(x)
	case *array.ExtensionBuilder:
		// A logical type over a storage type (JSON over VARCHAR): the row
		// value is the storage value.
		return AppendValue(bb.StorageBuilder(), v)
	case *array.StructBuilder:
		x, ok := v.(Row)
		if !ok || len(x) != bb.NumField() {
			return typeErr(b, v)
		}
		bb.Append(true)
		for f, fv := range x {
			if err := AppendValue(bb.FieldBuilder(f), fv); err != nil {
				return err
			}
		}
	case *array.ListBuilder:
		x, ok := v.([]any)
		if !ok {
			return typeErr(b, v)
		}
		bb.Append(true)
		for _, ev := range x {
			if err := AppendValue(bb.ValueBuilder(), ev); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("exec: no row-to-Arrow mapping for %s", b.Type())
	}
	return nil
}

func typeErr(b array.Builder, v any) error {
	return fmt.Errorf("exec: value %v (%T) does not fit a %s column", v, v, b.Type())
}

// EncodeRows builds an Arrow record of schema from rows. It is the reverse
// of DecodeRows and is used where an operator was asked for born-columnar
// output but computed rows (and by tests).
func EncodeRows(mem memory.Allocator, schema *arrow.Schema, rows []Row) (arrow.RecordBatch, error) {
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for _, r := range rows {
		if len(r) != len(schema.Fields()) {
			return nil, fmt.Errorf("exec: row has %d values, schema %d columns", len(r), len(schema.Fields()))
		}
		for c, v := range r {
			if err := AppendValue(bld.Field(c), v); err != nil {
				return nil, fmt.Errorf("column %q: %w", schema.Field(c).Name, err)
			}
		}
	}
	return bld.NewRecordBatch(), nil
}
