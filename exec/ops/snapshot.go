package ops

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Checkpointed operator state (exec.Snapshotter). Every stateful operator
// of this package writes the same frame around its own parts: a "kind"
// Value (the operator kind, so a snapshot restored into the wrong operator
// says so) and a "version" Value (the layout version of that kind, so a
// future layout refuses an old snapshot by name instead of misreading it).
// Tables go out as Arrow record batches, scalars as little-endian int64s.

// writeHeader writes the kind and layout version of a state.
func writeHeader(w exec.StateWriter, kind string, version uint32) error {
	if err := w.Value("kind", []byte(kind)); err != nil {
		return err
	}
	return w.Value("version", binary.LittleEndian.AppendUint32(nil, version))
}

// checkHeader refuses a state of another operator kind or layout version.
func checkHeader(r exec.StateReader, kind string, version uint32) error {
	k, ok, err := r.Value("kind")
	if err != nil {
		return fmt.Errorf("%s state: %w", kind, err)
	}
	if !ok {
		return fmt.Errorf("%s state: no kind recorded (not a state this operator wrote)", kind)
	}
	if string(k) != kind {
		return fmt.Errorf("%s state: the snapshot is of a %s", kind, k)
	}
	v, ok, err := r.Value("version")
	if err != nil {
		return fmt.Errorf("%s state: %w", kind, err)
	}
	if !ok || len(v) != 4 {
		return fmt.Errorf("%s state: no layout version recorded", kind)
	}
	if got := binary.LittleEndian.Uint32(v); got != version {
		return fmt.Errorf("%s state: layout version %d, this build reads version %d", kind, got, version)
	}
	return nil
}

// writeInts stores small scalars (watermarks, counters, flags) as one Value.
func writeInts(w exec.StateWriter, name string, vals ...int64) error {
	buf := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
	}
	return w.Value(name, buf)
}

// readInts reads what writeInts stored: exactly n values.
func readInts(r exec.StateReader, kind, name string, n int) ([]int64, error) {
	vals, err := readIntList(r, kind, name)
	if err == nil && len(vals) != n {
		err = fmt.Errorf("%s state: value %q holds %d numbers, want %d", kind, name, len(vals), n)
	}
	return vals, err
}

// readIntList reads what writeInts stored, however many values.
func readIntList(r exec.StateReader, kind, name string) ([]int64, error) {
	b, ok, err := r.Value(name)
	if err != nil {
		return nil, fmt.Errorf("%s state: %w", kind, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s state: value %q missing", kind, name)
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("%s state: value %q holds %d bytes, not a list of int64s", kind, name, len(b))
	}
	vals := make([]int64, len(b)/8)
	for i := range vals {
		vals[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return vals, nil
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// readPart reads a Records part whose schema must be want (nil: any). ok
// is false when the part was not written. The caller releases recs.
func readPart(r exec.StateReader, kind, name string, want *arrow.Schema) (schema *arrow.Schema, recs []arrow.RecordBatch, ok bool, err error) {
	schema, recs, ok, err = r.Records(name)
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("%s state: %w", kind, err)
		}
		return nil, nil, ok, err
	}
	if want != nil && !schema.Equal(want) {
		releaseRecs(recs)
		return nil, nil, true, fmt.Errorf("%s state: part %q has columns %s, this operator keeps %s (a snapshot of another plan?)",
			kind, name, schemaText(schema), schemaText(want))
	}
	for i, rec := range recs {
		if !rec.Schema().Equal(schema) {
			releaseRecs(recs)
			return nil, nil, true, fmt.Errorf("%s state: part %q batch %d has another schema", kind, name, i)
		}
	}
	return schema, recs, true, nil
}

func releaseRecs(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// schemaText renders a schema on one line, for errors.
func schemaText(s *arrow.Schema) string {
	out := "("
	for i, f := range s.Fields() {
		if i > 0 {
			out += ", "
		}
		out += f.Name + " " + f.Type.String()
	}
	return out + ")"
}

// plainSchema is s with dictionary-encoded columns as their value type:
// state is stored decoded, as a restored operator cannot share the
// dictionaries of batches that came before the checkpoint.
func plainSchema(s *arrow.Schema) *arrow.Schema {
	fs := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		f.Type = exec.PlainType(f.Type)
		fs[i] = f
	}
	return arrow.NewSchema(fs, nil)
}

// plainColumns returns rec's columns decoded to the types of schema, or
// an error when a column has another type (never a panic in
// NewRecordBatch). The caller releases them.
func plainColumns(mem memory.Allocator, schema *arrow.Schema, rec arrow.RecordBatch) ([]arrow.Array, error) {
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("batch has %d columns, the state %d", rec.NumCols(), schema.NumFields())
	}
	cols := make([]arrow.Array, 0, schema.NumFields())
	for c := 0; c < schema.NumFields(); c++ {
		a, err := exec.PlainArray(mem, rec.Column(c))
		if err == nil && !arrow.TypeEqual(a.DataType(), schema.Field(c).Type) {
			a.Release()
			err = fmt.Errorf("column %q is %s, the state keeps %s", schema.Field(c).Name, a.DataType(), schema.Field(c).Type)
		}
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols = append(cols, a)
	}
	return cols, nil
}

// int64Column builds a BIGINT column of vals.
func int64Column(mem memory.Allocator, vals []int64) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

// int64sOf reads a BIGINT state column, or says which column was not one.
func int64sOf(a arrow.Array, name string) ([]int64, error) {
	x, ok := a.(*array.Int64)
	if !ok || x.NullN() > 0 {
		return nil, fmt.Errorf("state column %q is not a BIGINT without NULLs", name)
	}
	return x.Int64Values(), nil
}

// withColumns makes a record of schema from cols (borrowed: the record
// takes its own references); an error instead of NewRecordBatch's panic
// when they do not fit it.
func withColumns(schema *arrow.Schema, cols []arrow.Array, n int64) (arrow.RecordBatch, error) {
	if len(cols) != schema.NumFields() {
		return nil, fmt.Errorf("%d columns for a state of %d", len(cols), schema.NumFields())
	}
	for i, c := range cols {
		if !arrow.TypeEqual(c.DataType(), schema.Field(i).Type) || int64(c.Len()) != n {
			return nil, fmt.Errorf("state column %q: %s of %d rows, want %s of %d", schema.Field(i).Name, c.DataType(), c.Len(), schema.Field(i).Type, n)
		}
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// hasPart reports whether a Records part was written (releasing what it
// read).
func hasPart(r exec.StateReader, name string) bool {
	_, recs, ok, err := r.Records(name)
	releaseRecs(recs)
	return ok && err == nil
}
