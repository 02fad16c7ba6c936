package expr

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// outCol assembles a fused program's chunk results into the one Arrow
// array Eval returns. Chunks start at multiples of chunkRows, so every
// chunk's bits start on a word boundary and are copied a word at a time.
type outCol struct {
	t     arrow.DataType
	kind  vkind
	n     int
	mem   memory.Allocator
	vals  *memory.Buffer
	valid *memory.Buffer // nil until a chunk has a NULL
	nulls int
}

func newOutCol(mem memory.Allocator, t arrow.DataType, kind vkind, n int) *outCol {
	o := &outCol{t: t, kind: kind, n: n, mem: mem}
	var size int
	switch kind {
	case vBool:
		size = nwords(n) * 8
	case vI32, vF32:
		size = 4 * n
	case vI64, vF64:
		size = 8 * n
	case vDec:
		size = 16 * n
	}
	o.vals = memory.NewResizableBuffer(mem)
	o.vals.Resize(size)
	return o
}

// bufOf views a buffer's bytes as values of T.
func bufOf[T pod](b *memory.Buffer) []T {
	bs := b.Bytes()
	var z T
	if len(bs) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&bs[0])), len(bs)/int(unsafe.Sizeof(z)))
}

// putVals copies a chunk's n values (or broadcasts a constant) to dst.
func putVals[T pod](dst, src []T, mask, n int) {
	if mask == 0 {
		x := src[0]
		for i := range dst[:n] {
			dst[i] = x
		}
		return
	}
	copy(dst[:n], src[:n])
}

func (o *outCol) put(off int, v *vec, n int) {
	if v.null {
		// Nothing computed a value: zero the slots, so an output built in
		// recycled memory (Fused.SetOutput) holds no stale bytes even
		// under its NULLs.
		o.clearVals(off, n)
	} else {
		switch o.kind {
		case vBool:
			putVals(bufOf[uint64](o.vals)[off>>6:], v.b, v.mask, nwords(n))
		case vI32:
			putVals(bufOf[int32](o.vals)[off:], v.i32, v.mask, n)
		case vI64:
			putVals(bufOf[int64](o.vals)[off:], v.i64, v.mask, n)
		case vF32:
			putVals(bufOf[float32](o.vals)[off:], v.f32, v.mask, n)
		case vF64:
			putVals(bufOf[float64](o.vals)[off:], v.f64, v.mask, n)
		case vDec:
			dst := bufOf[num](o.vals)[off : off+n]
			if v.wide {
				putVals(dst, v.d128, v.mask, n)
				break
			}
			src, m := v.i64, v.mask
			for i := range dst {
				x := src[i&m]
				dst[i] = num128(x)
			}
		}
	}
	w0, nw := off>>6, nwords(n)
	switch {
	case v.null:
		o.needValid(off)
		clear(bufOf[uint64](o.valid)[w0 : w0+nw])
		o.nulls += n
	case v.valid != nil:
		good := countTrue(v.valid, n)
		if good < n {
			o.needValid(off)
		}
		if o.valid != nil {
			copy(bufOf[uint64](o.valid)[w0:w0+nw], v.valid[:nw])
		}
		o.nulls += n - good
	case o.valid != nil:
		fillWords(bufOf[uint64](o.valid)[w0:], n, true)
	}
}

// clearVals zeroes the value slots of rows [off, off+n).
func (o *outCol) clearVals(off, n int) {
	switch o.kind {
	case vBool:
		clear(bufOf[uint64](o.vals)[off>>6:][:nwords(n)])
	case vI32, vF32:
		clear(bufOf[int32](o.vals)[off:][:n])
	case vI64, vF64:
		clear(bufOf[int64](o.vals)[off:][:n])
	case vDec:
		clear(bufOf[num](o.vals)[off:][:n])
	}
}

// num128 widens an int64 unscaled value: decimal128.FromI64 without its
// branches.
func num128(x int64) num { return decimal128.New(x>>63, uint64(x)) }

// needValid allocates the validity bitmap on the first NULL, with the
// rows before off valid.
func (o *outCol) needValid(off int) {
	if o.valid != nil {
		return
	}
	o.valid = memory.NewResizableBuffer(o.mem)
	o.valid.Resize(nwords(o.n) * 8)
	fillWords(bufOf[uint64](o.valid), off, true)
}

func (o *outCol) finish() arrow.Array {
	return finish(o.t, o.n, o.valid, o.nulls, o.vals)
}

func (o *outCol) discard() {
	o.vals.Release()
	if o.valid != nil {
		o.valid.Release()
	}
}
