package shuffle

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The split's gather builds one target's sub-record. Unlike a per-column
// gather (exec/ops), it sizes every buffer of every column up front and
// takes them all from ONE allocation, sliced per buffer: the allocator, not
// the copying, was most of the split's cost (each target needs its own
// output memory, so the number of allocations grows with the targets).
// Each sub-record owns only its own block, so a sub-batch held back for
// coalescing pins nothing else. Buffers are written in full, never
// zeroed and filled bit by bit, so an allocator that does not zero is fine.

// colPlan is how one column is gathered and where its buffers sit in the
// block.
type colPlan struct {
	kind     gatherKind
	width    int // bytes per value (fixed)
	nulls    bool
	validOff int
	validLen int
	valOff   int
	valLen   int
	dataOff  int // string bytes
	dataLen  int
}

type gatherKind uint8

const (
	gatherTake gatherKind = iota // Arrow's Take kernel, its own allocations
	gatherFixed
	gatherBool
	gatherBinary
)

func planKind(arr arrow.Array) (gatherKind, int) {
	switch arr.DataType().ID() {
	case arrow.BOOL:
		return gatherBool, 0
	case arrow.STRING, arrow.BINARY:
		return gatherBinary, 0
	case arrow.DICTIONARY, arrow.EXTENSION:
		return gatherTake, 0
	}
	fw, ok := arr.DataType().(arrow.FixedWidthDataType)
	bufs := arr.Data().Buffers()
	if !ok || len(bufs) != 2 || bufs[1] == nil {
		return gatherTake, 0
	}
	switch w := fw.BitWidth(); w {
	case 8, 16, 32, 64, 128:
		return gatherFixed, w / 8
	}
	return gatherTake, 0
}

func pad64(n int) int { return (n + 63) &^ 63 }

// gatherRecord builds the record of rec's rows idx, in idx order. plans is
// scratch, one per column.
func gatherRecord(mem memory.Allocator, rec arrow.RecordBatch, idx []int32, plans []colPlan, cols []arrow.Array) (arrow.RecordBatch, error) {
	n := len(idx)
	bitmap := int(bitutil.BytesForBits(int64(n)))
	total := 0
	for c := range plans {
		arr := rec.Column(c)
		p := colPlan{}
		p.kind, p.width = planKind(arr)
		if p.kind != gatherTake && arr.NullN() > 0 {
			p.nulls = true
			p.validOff, p.validLen = total, bitmap
			total += pad64(bitmap)
		}
		switch p.kind {
		case gatherFixed:
			p.valOff, p.valLen = total, n*p.width
		case gatherBool:
			p.valOff, p.valLen = total, bitmap
		case gatherBinary:
			p.valOff, p.valLen = total, (n+1)*4
			total += pad64(p.valLen)
			offs := arrow.GetOffsets[int32](arr.Data(), 1)
			size := 0
			for _, i := range idx {
				size += int(offs[i+1] - offs[i])
			}
			p.dataOff, p.dataLen = total, size
			total += pad64(size)
			plans[c] = p
			continue
		}
		total += pad64(p.valLen)
		plans[c] = p
	}

	block := memory.NewResizableBuffer(mem)
	block.Resize(total)
	defer block.Release() // the column buffers hold their own references
	slice := func(off, n int) *memory.Buffer { return memory.SliceBuffer(block, off, n) }

	clear(cols)
	fail := func(err error) (arrow.RecordBatch, error) {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
		return nil, err
	}
	bytes := block.Bytes()
	for c, p := range plans {
		arr := rec.Column(c)
		if p.kind == gatherTake {
			a, err := takeColumn(mem, arr, idx)
			if err != nil {
				return fail(fmt.Errorf("column %q: %w", rec.ColumnName(c), err))
			}
			cols[c] = a
			continue
		}
		var valid *memory.Buffer
		nulls := 0
		if p.nulls {
			nulls = gatherValidity(bytes[p.validOff:p.validOff+p.validLen], arr, idx)
			valid = slice(p.validOff, p.validLen)
		}
		dst := bytes[p.valOff : p.valOff+p.valLen]
		var bufs []*memory.Buffer
		switch p.kind {
		case gatherFixed:
			switch p.width {
			case 1:
				gatherValues(arrow.GetData[uint8](dst), arrow.GetValues[uint8](arr.Data(), 1), idx)
			case 2:
				gatherValues(arrow.GetData[uint16](dst), arrow.GetValues[uint16](arr.Data(), 1), idx)
			case 4:
				gatherValues(arrow.GetData[uint32](dst), arrow.GetValues[uint32](arr.Data(), 1), idx)
			case 8:
				gatherValues(arrow.GetData[uint64](dst), arrow.GetValues[uint64](arr.Data(), 1), idx)
			case 16:
				gatherValues(arrow.GetData[decimal128.Num](dst), arrow.GetValues[decimal128.Num](arr.Data(), 1), idx)
			}
			bufs = []*memory.Buffer{valid, slice(p.valOff, p.valLen)}
		case gatherBool:
			gatherBits(dst, arr.(*array.Boolean), idx)
			bufs = []*memory.Buffer{valid, slice(p.valOff, p.valLen)}
		case gatherBinary:
			data := arr.Data()
			var src []byte
			if b := data.Buffers()[2]; b != nil {
				src = b.Bytes()
			}
			gatherStrings(arrow.GetData[int32](dst), bytes[p.dataOff:p.dataOff+p.dataLen],
				arrow.GetOffsets[int32](data, 1), src, idx)
			bufs = []*memory.Buffer{valid, slice(p.valOff, p.valLen), slice(p.dataOff, p.dataLen)}
		}
		d := array.NewData(arr.DataType(), n, bufs, nil, nulls, 0)
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
		cols[c] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(n))
	for i, a := range cols {
		a.Release()
		cols[i] = nil
	}
	return out, nil
}

func gatherValues[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](dst, src []T, idx []int32) {
	dst = dst[:len(idx)]
	for k, i := range idx {
		dst[k] = src[i]
	}
}

// gatherValidity writes the validity bitmap of the gathered rows into dst
// (every byte) and returns the null count.
func gatherValidity(dst []byte, arr arrow.Array, idx []int32) int {
	valid := 0
	for k := 0; k < len(idx); k += 8 {
		var b byte
		for j, i := range idx[k:min(k+8, len(idx))] {
			if arr.IsValid(int(i)) {
				b |= 1 << j
				valid++
			}
		}
		dst[k/8] = b
	}
	return len(idx) - valid
}

func gatherBits(dst []byte, arr *array.Boolean, idx []int32) {
	for k := 0; k < len(idx); k += 8 {
		var b byte
		for j, i := range idx[k:min(k+8, len(idx))] {
			if arr.Value(int(i)) {
				b |= 1 << j
			}
		}
		dst[k/8] = b
	}
}

// gatherStrings copies the rows' bytes and writes offsets starting at 0.
func gatherStrings(dstOffs []int32, dst []byte, offs []int32, src []byte, idx []int32) {
	dstOffs = dstOffs[:len(idx)+1]
	pos := int32(0)
	for k, i := range idx {
		dstOffs[k] = pos
		lo, hi := offs[i], offs[i+1]
		pos += int32(copy(dst[pos:], src[lo:hi]))
	}
	dstOffs[len(idx)] = pos
}

// takeColumn is the general path (dictionary, nested, large types): Arrow's
// Take kernel.
func takeColumn(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.AppendValues(idx, nil)
	ia := ib.NewArray()
	defer ia.Release()
	out, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), arr, ia)
	if err != nil {
		return nil, fmt.Errorf("gather %s: %w", arr.DataType(), err)
	}
	return out, nil
}
