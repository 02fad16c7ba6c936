package expr

import (
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The fused evaluator's data: a vec is one node's values over the rows of
// a chunk, in scratch the node owns (or, for a column read in place, in
// the column's own Arrow buffer). Bits past the chunk's row count, in
// value and validity words alike, are unspecified: whoever counts or
// copies bits masks them.

// chunkRows is how many rows a fused program evaluates at a time: enough
// that the per-node dispatch is noise, few enough that a node's scratch
// (8 KB of int64) stays in the L1/L2 cache between producer and consumer.
const chunkRows = 1024

// vkind is how a vec holds its values.
type vkind uint8

const (
	vNone vkind = iota // validity only (IsNull over a type without kernels)
	vBool              // b: one bit per row
	vI32               // i32: INT, DATE
	vI64               // i64: BIGINT, TIMESTAMP
	vF32               // f32: FLOAT
	vF64               // f64: DOUBLE
	vDec               // DECIMAL: i64 unscaled (narrow) or d128 (wide)
	vStr               // VARCHAR: views into an Arrow column
)

// kindOf is the vec kind a column of type t is held in.
func kindOf(t arrow.DataType) vkind {
	switch StorageType(t).ID() {
	case arrow.BOOL:
		return vBool
	case arrow.INT32, arrow.DATE32:
		return vI32
	case arrow.INT64, arrow.TIMESTAMP:
		return vI64
	case arrow.FLOAT32:
		return vF32
	case arrow.FLOAT64:
		return vF64
	case arrow.DECIMAL128:
		return vDec
	case arrow.STRING:
		return vStr
	}
	return vNone
}

// vec is one node's result over a chunk. A constant (mask 0) holds its one
// value at index 0 and every kernel reads x[i&mask], so one loop serves
// column and constant operands, as slice() does for the per-node kernels.
type vec struct {
	kind  vkind
	valid []uint64 // bit i set: row i is not NULL; nil: no NULLs
	null  bool     // every row is NULL
	mask  int      // -1: one value per row; 0: a constant
	wide  bool     // vDec: the values are in d128, not i64

	b    []uint64 // vBool; a constant is one word, all ones or zero
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	d128 []num
	str  strView
}

// nwords is the number of 64-bit words holding n bits.
func nwords(n int) int { return (n + 63) >> 6 }

// tailMask keeps the bits of the last word that are among the first n.
func tailMask(n int) uint64 {
	if n&63 == 0 {
		return ^uint64(0)
	}
	return 1<<(n&63) - 1
}

func bitSet(w []uint64, i int) bool { return w[i>>6]>>(i&63)&1 != 0 }

// countTrue counts the set bits among the first n.
func countTrue(w []uint64, n int) int {
	if n == 0 {
		return 0
	}
	nw := nwords(n)
	c := 0
	for _, x := range w[:nw-1] {
		c += bits.OnesCount64(x)
	}
	return c + bits.OnesCount64(w[nw-1]&tailMask(n))
}

// wordBytes views words as the LSB-first bitmap bytes Arrow uses (the
// machine is little-endian, as Arrow's Go bitmaps assume).
func wordBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8)
}

// loadBits copies n bits of an Arrow bitmap starting at bit off into dst.
func loadBits(dst []uint64, src []byte, off, n int) {
	if n == 0 {
		return
	}
	db := wordBytes(dst)
	if off&7 == 0 {
		nb := (n + 7) >> 3
		copy(db[:nb], src[off>>3:off>>3+nb])
		return
	}
	bitutil.CopyBitmap(src, off, n, db, 0)
}

// gatherBits sets dst bit j to src bit off+rows[j].
func gatherBits(dst []uint64, src []byte, off int, rows []int32) {
	clear(dst[:nwords(len(rows))])
	for j, r := range rows {
		p := off + int(r)
		dst[j>>6] |= uint64(src[p>>3]>>(p&7)&1) << (j & 63)
	}
}

// b2w is a branch-free bool to 0/1.
func b2w(b bool) uint64 { return uint64(b2u(b)) }

// scratch hands out a fused program's reusable buffers, allocated from
// mem so a CheckedAllocator sees them, and frees them all on release.
type scratch struct {
	mem  memory.Allocator
	bufs []*memory.Buffer
}

// pod is what scratch buffers hold: values without Go pointers.
type pod interface {
	~int32 | ~int64 | ~uint64 | ~float32 | ~float64 | num
}

// grow returns s with room for n values: s itself when it is big enough,
// else a new buffer (of a full chunk once a batch needs more than a
// handful of rows, so a slot is reallocated at most twice).
func grow[T pod](sc *scratch, s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	c := 64
	if n > c {
		c = max(n, chunkRows)
	}
	var z T
	buf := memory.NewResizableBuffer(sc.mem)
	buf.Resize(c * int(unsafe.Sizeof(z)))
	sc.bufs = append(sc.bufs, buf)
	return unsafe.Slice((*T)(unsafe.Pointer(&buf.Bytes()[0])), c)[:n]
}

func (sc *scratch) release() {
	for _, b := range sc.bufs {
		b.Release()
	}
	sc.bufs = nil
}

// fctx is where a node evaluates: n rows of the current batch, either the
// run off..off+n-1 (dense) or the rows listed in rows (compacted, when an
// AND, OR, CASE or COALESCE evaluates a child only where it decides).
type fctx struct {
	b    *fbatch
	off  int
	n    int
	rows []int32
}

// row is the batch row at position i.
func (c *fctx) row(i int) int {
	if c.rows != nil {
		return int(c.rows[i])
	}
	return c.off + i
}

// compact is the context of the positions whose bit is set in sel (of
// c's n), with pos receiving those positions and rows their batch rows.
func (c *fctx) compact(sel []uint64, pos, rows []int32) (fctx, []int32) {
	pos = pos[:0]
	rows = rows[:0]
	nw := nwords(c.n)
	for w := 0; w < nw; w++ {
		x := sel[w]
		if w == nw-1 {
			x &= tailMask(c.n)
		}
		for x != 0 {
			i := w<<6 + bits.TrailingZeros64(x)
			pos = append(pos, int32(i))
			rows = append(rows, int32(c.row(i)))
			x &= x - 1
		}
	}
	return fctx{b: c.b, n: len(pos), rows: rows}, pos
}

// scatterVals writes src's k values to dst at the positions pos.
func scatterVals[T pod](dst, src []T, mask int, pos []int32) {
	for j, p := range pos {
		dst[p] = src[j&mask]
	}
}

// scatterBits writes src's bits (j&mask indexes a constant's word) to dst
// at the positions pos; the other bits of dst are left as they are.
func scatterBits(dst, src []uint64, mask int, pos []int32) {
	for j, p := range pos {
		bit := src[(j>>6)&mask] >> (j & 63) & 1
		w := &dst[p>>6]
		*w = *w&^(1<<(p&63)) | bit<<(p&63)
	}
}

// fillWords sets the first n bits of w to v (whole words).
func fillWords(w []uint64, n int, v bool) {
	x := uint64(0)
	if v {
		x = ^x
	}
	for i := range w[:nwords(n)] {
		w[i] = x
	}
}
