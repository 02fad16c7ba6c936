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

	"github.com/clink-sql/clink/exec/recycle"
)

// The split's gather builds one target's sub-record, from one input record
// (Split) or from the several a target's held rows came from (the
// exchange's coalescing). Unlike the per-column gather of exec/ops (which
// also routes dictionaries through its fixed-width path), it sizes every
// buffer of every column up front and takes them all from ONE allocation,
// sliced per buffer: the allocator, not the copying, is most of the split's
// cost (BenchmarkSplit vs BenchmarkSplitRecycled), and each target needs its
// own output memory. Each sub-record owns only its own block, so a
// sub-batch kept downstream pins nothing else. Every byte of a buffer is
// written (bitmaps a byte at a time), so a recycle.Allocator's unzeroed blocks are
// fine.

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

// segment is a source of gathered rows: rec's rows idx, in idx order, or
// all of rec's rows when idx is nil (concatenation).
type segment struct {
	rec arrow.RecordBatch
	idx []int32
}

func (s segment) len() int {
	if s.idx == nil {
		return int(s.rec.NumRows())
	}
	return len(s.idx)
}

// gatherRecord builds the record of rec's rows idx, in idx order.
func gatherRecord(mem memory.Allocator, rec arrow.RecordBatch, idx []int32, sc *Scratch) (arrow.RecordBatch, error) {
	sc.seg[0] = segment{rec: rec, idx: idx}
	out, err := gatherSegments(mem, rec.Schema(), sc.seg[:], sc)
	sc.seg[0] = segment{}
	return out, err
}

// gatherSegments builds one record of schema from segs, in order: the
// split's gather (one segment with indexes) and the exchange's coalescing
// (whole records) are the same copy into one block.
func gatherSegments(mem memory.Allocator, schema *arrow.Schema, segs []segment, sc *Scratch) (arrow.RecordBatch, error) {
	ncol := schema.NumFields()
	if cap(sc.plans) < ncol {
		sc.plans = make([]colPlan, ncol)
		sc.cols = make([]arrow.Array, ncol)
	}
	plans, cols := sc.plans[:ncol], sc.cols[:ncol]
	n := 0
	for _, sg := range segs {
		n += sg.len()
	}
	bitmap := int(bitutil.BytesForBits(int64(n)))
	total := 0
	for c := range plans {
		p := colPlan{}
		p.kind, p.width = planKind(segs[0].rec.Column(c))
		for _, sg := range segs[1:] {
			if k, w := planKind(sg.rec.Column(c)); k != p.kind || w != p.width {
				p.kind = gatherTake
			}
		}
		if p.kind == gatherTake {
			plans[c] = p
			continue
		}
		for _, sg := range segs {
			if sg.rec.Column(c).NullN() > 0 {
				p.nulls = true
			}
		}
		if p.nulls {
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
			size := 0
			for _, sg := range segs {
				offs := arrow.GetOffsets[int32](sg.rec.Column(c).Data(), 1)
				if sg.idx == nil {
					size += int(offs[len(offs)-1] - offs[0])
					continue
				}
				for _, i := range sg.idx {
					size += int(offs[i+1] - offs[i])
				}
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
		for i, a := range cols {
			if a != nil {
				a.Release()
				cols[i] = nil
			}
		}
		return nil, err
	}
	bytes := block.Bytes()
	for c, p := range plans {
		if p.kind == gatherTake {
			a, err := takeSegments(mem, segs, c)
			if err != nil {
				return fail(fmt.Errorf("column %q: %w", schema.Field(c).Name, err))
			}
			cols[c] = a
			continue
		}
		var valid *memory.Buffer
		nulls := 0
		if p.nulls {
			w := bitWriter{dst: bytes[p.validOff : p.validOff+p.validLen]}
			for _, sg := range segs {
				writeValidity(&w, sg.rec.Column(c), sg.idx)
			}
			w.finish()
			nulls = n - w.ones
			valid = slice(p.validOff, p.validLen)
		}
		dst := bytes[p.valOff : p.valOff+p.valLen]
		var bufs []*memory.Buffer
		switch p.kind {
		case gatherFixed:
			k := 0
			for _, sg := range segs {
				k += gatherFixedWidth(dst, k, p.width, sg.rec.Column(c), sg.idx)
			}
			bufs = []*memory.Buffer{valid, slice(p.valOff, p.valLen)}
		case gatherBool:
			w := bitWriter{dst: dst}
			for _, sg := range segs {
				writeBools(&w, sg.rec.Column(c).(*array.Boolean), sg.idx)
			}
			w.finish()
			bufs = []*memory.Buffer{valid, slice(p.valOff, p.valLen)}
		case gatherBinary:
			dstOffs := arrow.GetData[int32](dst)[:n+1]
			data := bytes[p.dataOff : p.dataOff+p.dataLen]
			k, pos := 0, int32(0)
			for _, sg := range segs {
				k, pos = gatherStrings(dstOffs, data, k, pos, sg.rec.Column(c), sg.idx)
			}
			dstOffs[n] = pos
			bufs = []*memory.Buffer{valid, slice(p.valOff, p.valLen), slice(p.dataOff, p.dataLen)}
		}
		d := array.NewData(schema.Field(c).Type, n, bufs, nil, nulls, 0)
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
		cols[c] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(schema, cols, int64(n))
	for i, a := range cols {
		a.Release()
		cols[i] = nil
	}
	return out, nil
}

// gatherFixedWidth writes arr's values (rows idx, or all) at element k of
// dst and returns how many it wrote.
func gatherFixedWidth(dst []byte, k, width int, arr arrow.Array, idx []int32) int {
	switch width {
	case 1:
		return gatherValues(arrow.GetData[uint8](dst)[k:], arrow.GetValues[uint8](arr.Data(), 1), idx)
	case 2:
		return gatherValues(arrow.GetData[uint16](dst)[k:], arrow.GetValues[uint16](arr.Data(), 1), idx)
	case 4:
		return gatherValues(arrow.GetData[uint32](dst)[k:], arrow.GetValues[uint32](arr.Data(), 1), idx)
	case 8:
		return gatherValues(arrow.GetData[uint64](dst)[k:], arrow.GetValues[uint64](arr.Data(), 1), idx)
	default:
		return gatherValues(arrow.GetData[decimal128.Num](dst)[k:], arrow.GetValues[decimal128.Num](arr.Data(), 1), idx)
	}
}

func gatherValues[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](dst, src []T, idx []int32) int {
	if idx == nil {
		return copy(dst, src)
	}
	dst = dst[:len(idx)]
	for k, i := range idx {
		dst[k] = src[i]
	}
	return len(idx)
}

// bitWriter writes a bitmap bit by bit, a whole byte at a time, so the
// destination needs no zeroing.
type bitWriter struct {
	dst  []byte
	n    int
	cur  byte
	ones int
}

func (w *bitWriter) add(v bool) {
	if v {
		w.cur |= 1 << (w.n & 7)
		w.ones++
	}
	w.n++
	if w.n&7 == 0 {
		w.dst[w.n>>3-1] = w.cur
		w.cur = 0
	}
}

func (w *bitWriter) finish() {
	if w.n&7 != 0 {
		w.dst[w.n>>3] = w.cur
	}
}

func writeValidity(w *bitWriter, arr arrow.Array, idx []int32) {
	all := arr.NullN() == 0
	if idx == nil {
		for i := range arr.Len() {
			w.add(all || arr.IsValid(i))
		}
		return
	}
	for _, i := range idx {
		w.add(all || arr.IsValid(int(i)))
	}
}

func writeBools(w *bitWriter, arr *array.Boolean, idx []int32) {
	if idx == nil {
		for i := range arr.Len() {
			w.add(arr.Value(i))
		}
		return
	}
	for _, i := range idx {
		w.add(arr.Value(int(i)))
	}
}

// gatherStrings copies arr's strings (rows idx, or all) from row k on, at
// byte pos, writing the offsets; it returns the next row and byte.
func gatherStrings(dstOffs []int32, dst []byte, k int, pos int32, arr arrow.Array, idx []int32) (int, int32) {
	data := arr.Data()
	offs := arrow.GetOffsets[int32](data, 1)
	var src []byte
	if b := data.Buffers()[2]; b != nil {
		src = b.Bytes()
	}
	if idx == nil {
		n := len(offs) - 1
		base := offs[0]
		for i := range n {
			dstOffs[k+i] = pos + offs[i] - base
		}
		pos += int32(copy(dst[pos:], src[base:offs[n]]))
		return k + n, pos
	}
	for _, i := range idx {
		dstOffs[k] = pos
		k++
		pos += int32(copy(dst[pos:], src[offs[i]:offs[i+1]]))
	}
	return k, pos
}

// takeSegments gathers column c of segs the general way: Arrow's Take per
// indexed segment, then Concatenate.
func takeSegments(mem memory.Allocator, segs []segment, c int) (arrow.Array, error) {
	if len(segs) == 1 && segs[0].idx != nil {
		return takeColumn(mem, segs[0].rec.Column(c), segs[0].idx)
	}
	parts := make([]arrow.Array, len(segs))
	defer func() {
		for _, a := range parts {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, sg := range segs {
		if sg.idx == nil {
			parts[i] = sg.rec.Column(c)
			parts[i].Retain()
			continue
		}
		a, err := takeColumn(mem, sg.rec.Column(c), sg.idx)
		if err != nil {
			return nil, err
		}
		parts[i] = a
	}
	return array.Concatenate(parts, recycle.Zeroing(mem))
}

// takeColumn is the general path (dictionary, nested, large types): Arrow's
// Take kernel. The kernel relies on fresh allocations being zeroed, which
// a recycle.Allocator's are not, so it allocates from the one under it.
func takeColumn(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	mem = recycle.Zeroing(mem)
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
