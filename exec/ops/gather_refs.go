package ops

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// cellRef names one value among several arrays of the same type: the
// state of a streaming join keeps each input batch as it came, so the rows
// one probe matches are spread over many of them.
type cellRef struct {
	arr int32 // index into the arrays
	row int32
}

// gatherRefs builds a new array holding srcs[r.arr][r.row] for every r,
// the multi-array form of gather: fixed-width types, booleans and strings
// are copied straight between buffers; anything else concatenates the
// arrays the refs name and gathers from that.
func gatherRefs(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []cellRef) (arrow.Array, error) {
	switch dt.ID() {
	case arrow.BOOL:
		return gatherRefsBool(mem, dt, srcs, refs), nil
	case arrow.STRING, arrow.BINARY:
		return gatherRefsBinary(mem, dt, srcs, refs), nil
	case arrow.DICTIONARY:
		return gatherRefsConcat(mem, dt, srcs, refs)
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && plainFixed(srcs, refs) {
		switch fw.BitWidth() {
		case 8:
			return gatherRefsFixed[uint8](mem, dt, srcs, refs), nil
		case 16:
			return gatherRefsFixed[uint16](mem, dt, srcs, refs), nil
		case 32:
			return gatherRefsFixed[uint32](mem, dt, srcs, refs), nil
		case 64:
			return gatherRefsFixed[uint64](mem, dt, srcs, refs), nil
		case 128:
			return gatherRefsFixed[decimal128.Num](mem, dt, srcs, refs), nil
		}
	}
	return gatherRefsConcat(mem, dt, srcs, refs)
}

// plainFixed reports whether every array the refs name has the plain
// two-buffer layout (validity, values) the typed copy reads.
func plainFixed(srcs []arrow.Array, refs []cellRef) bool {
	last := int32(-1)
	for _, r := range refs {
		if r.arr == last {
			continue
		}
		last = r.arr
		bufs := srcs[r.arr].Data().Buffers()
		if len(bufs) != 2 || bufs[1] == nil {
			return false
		}
	}
	return true
}

func gatherRefsValidity(mem memory.Allocator, srcs []arrow.Array, refs []cellRef) (*memory.Buffer, int) {
	anyNulls := false
	for _, s := range srcs {
		if s != nil && s.NullN() > 0 {
			anyNulls = true
			break
		}
	}
	if !anyNulls {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(refs)))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for k, r := range refs {
		if srcs[r.arr].IsValid(int(r.row)) {
			bitutil.SetBit(bits, k)
		} else {
			nulls++
		}
	}
	return buf, nulls
}

func gatherRefsFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []cellRef) arrow.Array {
	var zero T
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(len(refs) * int(unsafe.Sizeof(zero)))
	dst := arrow.GetData[T](vals.Bytes())[:len(refs)]
	last, src := int32(-1), []T(nil)
	for k, r := range refs {
		if r.arr != last {
			last, src = r.arr, arrow.GetValues[T](srcs[r.arr].Data(), 1)
		}
		dst[k] = src[r.row]
	}
	valid, nulls := gatherRefsValidity(mem, srcs, refs)
	return finishData(dt, len(refs), []*memory.Buffer{valid, vals}, nulls)
}

func gatherRefsBool(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []cellRef) arrow.Array {
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(len(refs)))))
	bits := vals.Bytes()
	clear(bits)
	for k, r := range refs {
		if srcs[r.arr].(*array.Boolean).Value(int(r.row)) {
			bitutil.SetBit(bits, k)
		}
	}
	valid, nulls := gatherRefsValidity(mem, srcs, refs)
	return finishData(dt, len(refs), []*memory.Buffer{valid, vals}, nulls)
}

func gatherRefsBinary(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []cellRef) arrow.Array {
	total := 0
	for _, r := range refs {
		offs := arrow.GetOffsets[int32](srcs[r.arr].Data(), 1)
		total += int(offs[r.row+1] - offs[r.row])
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(refs) + 1) * 4)
	dstOffs := arrow.GetData[int32](offBuf.Bytes())[:len(refs)+1]
	valBuf := memory.NewResizableBuffer(mem)
	valBuf.Resize(total)
	dst := valBuf.Bytes()
	pos := int32(0)
	last := int32(-1)
	var offs []int32
	var bytes []byte
	for k, r := range refs {
		if r.arr != last {
			last = r.arr
			data := srcs[r.arr].Data()
			offs, bytes = arrow.GetOffsets[int32](data, 1), nil
			if b := data.Buffers()[2]; b != nil {
				bytes = b.Bytes()
			}
		}
		dstOffs[k] = pos
		pos += int32(copy(dst[pos:], bytes[offs[r.row]:offs[r.row+1]]))
	}
	dstOffs[len(refs)] = pos
	valid, nulls := gatherRefsValidity(mem, srcs, refs)
	return finishData(dt, len(refs), []*memory.Buffer{valid, offBuf, valBuf}, nulls)
}

// gatherRefsConcat is the general path: concatenate the arrays the refs
// name (each once) and gather by position in the result.
func gatherRefsConcat(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []cellRef) (arrow.Array, error) {
	base := map[int32]int32{}
	var parts []arrow.Array
	n := int32(0)
	for _, r := range refs {
		if _, ok := base[r.arr]; !ok {
			base[r.arr] = n
			parts = append(parts, srcs[r.arr])
			n += int32(srcs[r.arr].Len())
		}
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	all, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, fmt.Errorf("gather %s column: %w", dt, err)
	}
	defer all.Release()
	idx := make([]int32, len(refs))
	for k, r := range refs {
		idx[k] = base[r.arr] + r.row
	}
	return gather(mem, all, idx)
}
