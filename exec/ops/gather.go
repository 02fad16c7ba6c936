// Package ops holds the relational operators: filter, project, limit,
// union all, sort / top-n, hash aggregate, hash join, the result sink and
// the VALUES source. Each has an authoritative row path (Process over
// b.Rows()) and a columnar path over the Arrow arrays of b.Record() that
// never materialises its input.
package ops

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec/recycle"
)

// gather builds a new array holding arr[idx[k]] for every k; an index of -1
// gives NULL (the unmatched side of an outer join). Fixed-width types are
// copied by element width straight between buffers, strings and binaries
// by offsets; anything else (nested, dictionary) goes through Arrow's Take
// kernel. A hand-rolled copy beats compute.Take here because it skips
// building an index array and the kernel dispatch (see BenchmarkGather*).
func gather(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	data := arr.Data()
	switch arr.DataType().ID() {
	case arrow.BOOL:
		return gatherBool(mem, arr, idx), nil
	case arrow.STRING, arrow.BINARY:
		return gatherBinary(mem, arr, idx), nil
	case arrow.DICTIONARY:
		return gatherDict(mem, arr.(*array.Dictionary), idx)
	case arrow.STRUCT:
		return gatherStruct(mem, arr.(*array.Struct), idx)
	}
	if fw, ok := arr.DataType().(arrow.FixedWidthDataType); ok && len(data.Buffers()) == 2 && data.Buffers()[1] != nil {
		switch fw.BitWidth() {
		case 8:
			return gatherFixed[uint8](mem, arr, idx), nil
		case 16:
			return gatherFixed[uint16](mem, arr, idx), nil
		case 32:
			return gatherFixed[uint32](mem, arr, idx), nil
		case 64:
			return gatherFixed[uint64](mem, arr, idx), nil
		case 128:
			return gatherFixed[decimal128.Num](mem, arr, idx), nil
		}
	}
	return gatherTake(mem, arr, idx)
}

// Gather returns a new array of arr[idx[k]] for every k (an index of -1
// gives NULL): the filter's gather, for a source that selects rows itself
// (the Parquet scan evaluating a pushed-down predicate).
func Gather(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	return gather(mem, arr, idx)
}

// gatherValidity returns the validity bitmap of the gathered array (nil
// when every output is valid) and the null count.
func gatherValidity(mem memory.Allocator, arr arrow.Array, idx []int32) (*memory.Buffer, int) {
	srcNulls := arr.NullN() > 0
	anyMissing := false
	if !srcNulls {
		for _, i := range idx {
			if i < 0 {
				anyMissing = true
				break
			}
		}
		if !anyMissing {
			return nil, 0
		}
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(idx)))))
	bits := buf.Bytes()
	for i := range bits {
		bits[i] = 0
	}
	nulls := 0
	for k, i := range idx {
		if i >= 0 && (!srcNulls || arr.IsValid(int(i))) {
			bitutil.SetBit(bits, k)
		} else {
			nulls++
		}
	}
	return buf, nulls
}

func gatherFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	bufs, nulls := gatherFixedBufs[T](mem, arr, idx)
	return finishData(arr.DataType(), len(idx), bufs, nulls)
}

// gatherFixedBufs gathers the validity and value buffers of a fixed-width
// array (one reference each, for the caller to hand over).
func gatherFixedBufs[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, arr arrow.Array, idx []int32) ([]*memory.Buffer, int) {
	var zero T
	src := arrow.GetValues[T](arr.Data(), 1)
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(len(idx) * int(unsafe.Sizeof(zero)))
	dst := arrow.GetData[T](vals.Bytes())[:len(idx)]
	for k, i := range idx {
		if i >= 0 {
			dst[k] = src[i]
		} else {
			dst[k] = zero
		}
	}
	valid, nulls := gatherValidity(mem, arr, idx)
	return []*memory.Buffer{valid, vals}, nulls
}

// gatherDict gathers a dictionary array's codes and shares its dictionary:
// a filter over a dictionary-encoded VARCHAR copies four bytes a row, and
// the aggregate behind it recognises the same dictionary batch after batch
// (keyIndex keys its per-dictionary ids on the dictionary's data).
func gatherDict(mem memory.Allocator, arr *array.Dictionary, idx []int32) (arrow.Array, error) {
	dt := arr.DataType().(*arrow.DictionaryType)
	var bufs []*memory.Buffer
	var nulls int
	switch dt.IndexType.(arrow.FixedWidthDataType).BitWidth() {
	case 8:
		bufs, nulls = gatherFixedBufs[uint8](mem, arr, idx)
	case 16:
		bufs, nulls = gatherFixedBufs[uint16](mem, arr, idx)
	case 32:
		bufs, nulls = gatherFixedBufs[uint32](mem, arr, idx)
	case 64:
		bufs, nulls = gatherFixedBufs[uint64](mem, arr, idx)
	default:
		return gatherTake(mem, arr, idx)
	}
	dict, _ := arr.Data().Dictionary().(*array.Data)
	d := array.NewDataWithDictionary(dt, len(idx), bufs, nulls, 0, dict)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

func gatherBool(mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	src := arr.(*array.Boolean)
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(len(idx)))))
	bits := vals.Bytes()
	for i := range bits {
		bits[i] = 0
	}
	for k, i := range idx {
		if i >= 0 && src.Value(int(i)) {
			bitutil.SetBit(bits, k)
		}
	}
	valid, nulls := gatherValidity(mem, arr, idx)
	return finishData(arr.DataType(), len(idx), []*memory.Buffer{valid, vals}, nulls)
}

// gatherBinary copies offsets and bytes of utf8 / binary arrays (32-bit
// offsets); both share one layout. Consecutive source rows (a filter that
// keeps most rows gives long runs of them) are copied as one block, with
// their offsets rebased in one tight loop: a copy per value was most of a
// selective filter's cost over short strings.
func gatherBinary(mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	data := arr.Data()
	offs := arrow.GetOffsets[int32](data, 1)
	var bytes []byte
	if b := data.Buffers()[2]; b != nil {
		bytes = b.Bytes()
	}
	total := 0
	for _, i := range idx {
		if i >= 0 {
			total += int(offs[i+1] - offs[i])
		}
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(idx) + 1) * 4)
	dstOffs := arrow.GetData[int32](offBuf.Bytes())[:len(idx)+1]
	valBuf := memory.NewResizableBuffer(mem)
	valBuf.Resize(total)
	dst := valBuf.Bytes()
	pos := int32(0)
	for k := 0; k < len(idx); {
		i := idx[k]
		if i < 0 {
			dstOffs[k] = pos
			k++
			continue
		}
		if k+1 == len(idx) || idx[k+1] != i+1 { // a lone row (a join's picks, a sparse filter)
			dstOffs[k] = pos
			pos += int32(copy(dst[pos:], bytes[offs[i]:offs[i+1]]))
			k++
			continue
		}
		// The run idx[k:e] names rows i, i+1, ...
		e := k + 2
		for e < len(idx) && idx[e] == i+int32(e-k) {
			e++
		}
		last := i + int32(e-k)
		base := pos - offs[i]
		for j, o := range offs[i:last] {
			dstOffs[k+j] = o + base
		}
		pos += int32(copy(dst[pos:], bytes[offs[i]:offs[last]]))
		k = e
	}
	dstOffs[len(idx)] = pos
	valid, nulls := gatherValidity(mem, arr, idx)
	return finishData(arr.DataType(), len(idx), []*memory.Buffer{valid, offBuf, valBuf}, nulls)
}

// finishData wraps freshly allocated buffers (one reference each, handed
// over to the array) into an array.
func finishData(dt arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
	d := array.NewData(dt, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	out := array.MakeFromData(d)
	d.Release()
	return out
}

// gatherStruct gathers each field (nexmark's person, auction and bid
// ROWs pass every filter this way) and the struct's own validity.
func gatherStruct(mem memory.Allocator, arr *array.Struct, idx []int32) (arrow.Array, error) {
	children := make([]arrow.ArrayData, 0, arr.NumField())
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for i := 0; i < arr.NumField(); i++ {
		c, err := gather(mem, arr.Field(i), idx)
		if err != nil {
			return nil, err
		}
		d := c.Data()
		d.Retain()
		c.Release()
		children = append(children, d)
	}
	valid, nulls := gatherValidity(mem, arr, idx)
	d := array.NewData(arr.DataType(), len(idx), []*memory.Buffer{valid}, children, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// gatherTake is the general path for types the typed gathers do not cover.
func gatherTake(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	mem = recycle.Zeroing(mem) // the kernel and the builder assume zeroed memory
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.Reserve(len(idx))
	for _, i := range idx {
		if i < 0 {
			ib.UnsafeAppendBoolToBitmap(false)
		} else {
			ib.UnsafeAppend(i)
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	out, err := compute.TakeArray(ctx, arr, ia)
	if err != nil {
		return nil, fmt.Errorf("gather %s column: %w", arr.DataType(), err)
	}
	return out, nil
}

// gatherRecord gathers every column of rec into a new record of schema.
func gatherRecord(mem memory.Allocator, schema *arrow.Schema, cols []arrow.Array, idx []int32) (arrow.RecordBatch, error) {
	out := make([]arrow.Array, len(cols))
	defer func() {
		for _, a := range out {
			if a != nil {
				a.Release()
			}
		}
	}()
	for c, col := range cols {
		a, err := gather(mem, col, idx)
		if err != nil {
			return nil, err
		}
		out[c] = a
	}
	return array.NewRecordBatch(schema, out, int64(len(idx))), nil
}

// recordColumns lists rec's columns (borrowed).
func recordColumns(rec arrow.RecordBatch) []arrow.Array {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		cols[i] = rec.Column(i)
	}
	return cols
}
