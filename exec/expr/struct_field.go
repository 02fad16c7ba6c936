package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// FieldRef reads one field of a ROW value: bid.price over the nexmark
// table's bid column. A NULL row gives a NULL field.
type FieldRef struct {
	In    Expr
	Index int
	name  string
	t     arrow.DataType
}

// NewField references field name (case-insensitive) of the ROW expression in.
func NewField(in Expr, name string) (*FieldRef, error) {
	st, ok := in.Type().(*arrow.StructType)
	if !ok {
		return nil, fmt.Errorf("cannot read field '%s' of %s: not a ROW", name, in.Type())
	}
	for i, f := range st.Fields() {
		if strings.EqualFold(f.Name, name) {
			return &FieldRef{In: in, Index: i, name: f.Name, t: f.Type}, nil
		}
	}
	return nil, fmt.Errorf("ROW %s has no field '%s'", in, name)
}

func (f *FieldRef) Type() arrow.DataType { return f.t }

func (f *FieldRef) String() string { return f.In.String() + "." + f.name }

func (f *FieldRef) EvalRow(r exec.Row) (any, error) {
	v, err := f.In.EvalRow(r)
	if err != nil || v == nil {
		return nil, err
	}
	row, ok := v.(exec.Row)
	if !ok || f.Index >= len(row) {
		return nil, fmt.Errorf("%s: not a ROW value: %v", f, v)
	}
	return row[f.Index], nil
}

// EvalColumnar returns the child array, zero copy when the struct has no
// nulls of its own; otherwise the child's validity is ANDed with the
// struct's, so a NULL row reads as a NULL field.
func (f *FieldRef) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	in, err := f.In.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	st := in.(*array.Struct)
	child := st.Field(f.Index)
	if st.NullN() == 0 {
		child.Retain()
		return child, nil
	}
	// The struct's own offset applies to its validity; the child array
	// returned by Field is already sliced to the struct's window.
	n := st.Len()
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := valid.Bytes()
	for i := 0; i < n; i++ {
		bitutil.SetBitTo(bits, i, st.IsValid(i) && child.IsValid(i))
	}
	cd := child.Data()
	bufs := append([]*memory.Buffer(nil), cd.Buffers()...)
	// Rebase: the new validity bitmap starts at bit 0, so the data must be
	// a slice starting at the child's offset with offset 0 for validity.
	// Build via a zero-offset copy of the child's data when it is offset.
	if cd.Offset() != 0 {
		valid.Release()
		return f.copyWithStructNulls(mem, st, child)
	}
	bufs[0] = valid
	data := array.NewData(cd.DataType(), n, bufs, cd.Children(), array.UnknownNullCount, 0)
	defer data.Release()
	valid.Release()
	return array.MakeFromData(data), nil
}

// copyWithStructNulls is the rare path (a sliced struct with nulls): it
// rebuilds the child value by value.
func (f *FieldRef) copyWithStructNulls(mem memory.Allocator, st *array.Struct, child arrow.Array) (arrow.Array, error) {
	b := array.NewBuilder(mem, f.t)
	defer b.Release()
	for i := 0; i < st.Len(); i++ {
		var v any
		if st.IsValid(i) {
			v = valueAt(child, i)
		}
		if err := appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}
