package exec

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Dictionary-encoded VARCHAR columns are an optimisation the planner turns
// on for a scan column that only travels to GROUP BY keys (see
// plan.dictionaries): the scan hands out codes into the file's dictionary,
// filters gather codes, and the aggregate maps each dictionary entry to a
// group once. Every other consumer sees the column's declared type, so
// these helpers let code that meets a dictionary array anyway treat it as
// the plain column it stands for.

// PlainType is t, or a dictionary type's value type.
func PlainType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return t
}

// SameColumnType reports whether got can stand for a column declared as
// want: the same type, or a dictionary of it.
func SameColumnType(got, want arrow.DataType) bool {
	return arrow.TypeEqual(got, want) || arrow.TypeEqual(PlainType(got), want)
}

// PlainArray returns a as a plain array: a itself (retained) unless it is
// dictionary-encoded, in which case the values are decoded into a new
// array. The caller releases the result.
func PlainArray(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	d, ok := a.(*array.Dictionary)
	if !ok {
		a.Retain()
		return a, nil
	}
	switch vals := d.Dictionary().(type) {
	case *array.String:
		return decodeDict(mem, d, vals.DataType(), vals.Len(), vals.IsNull, func(j int) []byte {
			v := vals.Value(j) // read only: a view, not the copy []byte(v) would allocate per row
			return unsafe.Slice(unsafe.StringData(v), len(v))
		})
	case *array.Binary:
		return decodeDict(mem, d, vals.DataType(), vals.Len(), vals.IsNull, vals.Value)
	}
	return nil, fmt.Errorf("dictionary of %s is not supported here", d.Dictionary().DataType())
}

// decodeDict writes the values of d into a new STRING or BINARY array: one
// pass for the sizes and validity, one for the bytes.
func decodeDict(mem memory.Allocator, d *array.Dictionary, typ arrow.DataType, dictLen int, isNull func(int) bool, value func(int) []byte) (arrow.Array, error) {
	n := d.Len()
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	validBuf := memory.NewResizableBuffer(mem)
	validBuf.Resize(int(bitutil.BytesForBits(int64(n))))
	valid := validBuf.Bytes()
	clear(valid)
	nulls := 0
	size := 0
	offs[0] = 0
	for i := 0; i < n; i++ {
		if d.IsValid(i) {
			j := d.GetValueIndex(i)
			if j < 0 || j >= dictLen {
				validBuf.Release()
				offBuf.Release()
				return nil, fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", j, dictLen)
			}
			if !isNull(j) {
				size += len(value(j))
				bitutil.SetBit(valid, i)
				offs[i+1] = int32(size)
				continue
			}
		}
		nulls++
		offs[i+1] = int32(size)
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(size)
	data := dataBuf.Bytes()
	for i := 0; i < n; i++ {
		if bitutil.BitIsSet(valid, i) {
			copy(data[offs[i]:], value(d.GetValueIndex(i)))
		}
	}
	var vb *memory.Buffer
	if nulls > 0 {
		vb = validBuf
	}
	out := array.NewData(typ, n, []*memory.Buffer{vb, offBuf, dataBuf}, nil, nulls, 0)
	validBuf.Release()
	offBuf.Release()
	dataBuf.Release()
	defer out.Release()
	return array.MakeFromData(out), nil
}
