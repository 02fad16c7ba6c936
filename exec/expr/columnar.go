package expr

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Shared machinery of the vectorised path: output buffers, validity
// bitmaps, constant operands, and the element-at-a-time fallback.

// newValues allocates an output buffer of n values of T.
func newValues[T arrow.FixedWidthType](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(z)))
	if n == 0 {
		return buf, nil
	}
	return buf, arrow.GetData[T](buf.Bytes())[:n]
}

// newBits allocates a zeroed bitmap of n bits.
func newBits(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	b := buf.Bytes()
	clear(b)
	return buf, b
}

// values is arr's value slice (offset applied) for a fixed-width array.
func values[T arrow.FixedWidthType](arr arrow.Array) []T {
	return arrow.GetValues[T](arr.Data(), 1)
}

// finish wraps buffers into an array and drops this function's references
// (NewData retains what it keeps).
func finish(t arrow.DataType, n int, validity *memory.Buffer, nulls int, bufs ...*memory.Buffer) arrow.Array {
	all := append([]*memory.Buffer{validity}, bufs...)
	if nulls == 0 {
		all[0] = nil
	}
	data := array.NewData(t, n, all, nil, nulls, 0)
	arr := array.MakeFromData(data)
	data.Release()
	for _, b := range bufs {
		b.Release()
	}
	if validity != nil {
		validity.Release()
	}
	return arr
}

// alignedBits returns the n bits of bm starting at bit off as a slice
// whose bit 0 is element 0, copying only when off is not byte aligned.
func alignedBits(bm []byte, off, n int) []byte {
	nb := int(bitutil.BytesForBits(int64(n)))
	if off%8 == 0 {
		return bm[off/8 : off/8+nb]
	}
	out := make([]byte, nb)
	bitutil.CopyBitmap(bm, off, n, out, 0)
	return out
}

// validBits is arr's validity as an aligned bitmap, or nil when it has no
// nulls.
func validBits(arr arrow.Array) []byte {
	if arr.NullN() == 0 {
		return nil
	}
	if arr.DataType().ID() == arrow.NULL || len(arr.NullBitmapBytes()) == 0 {
		return make([]byte, bitutil.BytesForBits(int64(arr.Len())))
	}
	return alignedBits(arr.NullBitmapBytes(), arr.Data().Offset(), arr.Len())
}

// boolBits is a Boolean array's value bitmap, aligned.
func boolBits(arr *array.Boolean) []byte {
	if arr.Len() == 0 {
		return nil
	}
	return alignedBits(arr.Data().Buffers()[1].Bytes(), arr.Data().Offset(), arr.Len())
}

// andValidity is the validity of a result that is NULL wherever any input
// is (the AND of the inputs' bitmaps). nil buffer: no nulls.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) (*memory.Buffer, int) {
	var out *memory.Buffer
	var ob []byte
	for _, a := range arrs {
		if a == nil || a.NullN() == 0 {
			continue
		}
		vb := validBits(a)
		if out == nil {
			out, ob = newBits(mem, n)
			copy(ob, vb)
			continue
		}
		for i := range ob {
			ob[i] &= vb[i]
		}
	}
	if out == nil {
		return nil, 0
	}
	return out, n - bitutil.CountSetBits(ob, 0, n)
}

// operand is one evaluated input of a kernel: a column, or a literal kept
// as a scalar so a constant side is never materialised into an array.
type operand struct {
	arr    arrow.Array
	scalar any // the constant when arr == nil; nil is NULL
}

func evalOperand(mem memory.Allocator, e Expr, rec arrow.RecordBatch) (operand, error) {
	if l, ok := e.(*Literal); ok {
		return operand{scalar: l.v}, nil
	}
	a, err := e.EvalColumnar(mem, rec)
	if err != nil {
		return operand{}, err
	}
	if a.DataType().ID() == arrow.NULL {
		a.Release()
		return operand{}, nil
	}
	return operand{arr: a}, nil
}

func (o operand) isNullScalar() bool { return o.arr == nil && o.scalar == nil }

func (o operand) release() {
	if o.arr != nil {
		o.arr.Release()
	}
}

// slice returns the operand's values and the index mask for kernels:
// a column indexes with i & -1, a scalar is a one-element slice indexed
// with i & 0, so one loop serves column-column and column-constant.
func slice[T arrow.FixedWidthType](o operand) ([]T, int) {
	if o.arr == nil {
		return []T{o.scalar.(T)}, 0
	}
	return values[T](o.arr), -1
}

// nullArray is n NULLs of type t.
func nullArray(mem memory.Allocator, t arrow.DataType, n int) arrow.Array {
	if ext, ok := t.(arrow.ExtensionType); ok {
		// Storage first, label last: the same shape as a computed column.
		st := array.MakeArrayOfNull(mem, ext.StorageType(), n)
		defer st.Release()
		return array.NewExtensionArrayWithStorage(ext, st)
	}
	return array.MakeArrayOfNull(mem, t, n)
}

// rowFallback evaluates e element at a time through its row path. The
// columnar path uses it (or mapValues, its unary form) only for:
//   - CAST from VARCHAR (parsing) and the BOOLEAN conversions;
//   - LIKE whose pattern is not a constant, SUBSTRING of a constant string;
//   - lower/upper of non-ASCII data, comparisons of BOOLEAN and BYTES;
//   - AND/OR/CASE/COALESCE whose vectorised branch raised an error that a
//     row-at-a-time evaluation might never reach (1/x under x <> 0);
//   - a typed kernel that hit an overflow or bad value, to report the
//     first failing row exactly as the row path does.
func rowFallback(mem memory.Allocator, e Expr, rec arrow.RecordBatch) (arrow.Array, error) {
	n := int(rec.NumRows())
	b := array.NewBuilder(mem, e.Type())
	defer b.Release()
	b.Reserve(n)
	row := make(exec.Row, rec.NumCols())
	cols := rec.Columns()
	for i := 0; i < n; i++ {
		for c, col := range cols {
			row[c] = valueAt(col, i)
		}
		v, err := e.EvalRow(row)
		if err != nil {
			return nil, err
		}
		if err := appendValue(b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
	}
	return b.NewArray(), nil
}

// mapValues applies f to every value of arr, element at a time (boxed):
// the fallback for unary conversions without a typed kernel.
func mapValues(mem memory.Allocator, arr arrow.Array, to arrow.DataType, f func(any) (any, error)) (arrow.Array, error) {
	n := arr.Len()
	b := array.NewBuilder(mem, to)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		v := valueAt(arr, i)
		if v != nil {
			var err error
			if v, err = f(v); err != nil {
				return nil, err
			}
		}
		if err := appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// EvalPredicate evaluates a BOOLEAN expression over rec. Whether a NULL
// result keeps the row is the caller's business (WHERE drops it).
func EvalPredicate(mem memory.Allocator, e Expr, rec arrow.RecordBatch) (*array.Boolean, error) {
	switch e.Type().ID() {
	case arrow.BOOL, arrow.NULL:
	default:
		return nil, fmt.Errorf("predicate %s is %s, not BOOLEAN", e, typeName(e.Type()))
	}
	a, err := e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, err
	}
	if b, ok := a.(*array.Boolean); ok {
		return b, nil
	}
	n := a.Len()
	a.Release()
	return nullArray(mem, arrow.FixedWidthTypes.Boolean, n).(*array.Boolean), nil
}

// SelectionVector returns the indexes of the rows where pred is TRUE (not
// FALSE, not NULL), appended to buf[:0] so a caller can reuse it.
func SelectionVector(pred *array.Boolean, buf []int32) []int32 {
	buf = buf[:0]
	n := pred.Len()
	if n == 0 {
		return buf
	}
	vals := boolBits(pred)
	valid := validBits(pred)
	for j, by := range vals {
		if valid != nil {
			by &= valid[j]
		}
		for by != 0 {
			k := bitsTrailingZeros8(by)
			i := j*8 + k
			if i >= n {
				break
			}
			buf = append(buf, int32(i))
			by &= by - 1
		}
	}
	return buf
}

func bitsTrailingZeros8(b byte) int { return bits.TrailingZeros8(b) }

// countBits counts the set bits among the first n of an aligned bitmap.
func countBits(b []byte, n int) int { return bitutil.CountSetBits(b, 0, n) }

// fold evaluates an expression whose inputs are all constants once, when
// the query is bound: a constant error (1/0, an overflow) is reported then,
// and kernels never see two scalars.
// maxFoldText is how many nested folds a constant's text shows.
const maxFoldText = 16

func fold(e Expr, inputs ...Expr) (Expr, error) {
	for _, in := range inputs {
		if _, ok := in.(*Literal); !ok {
			return e, nil
		}
	}
	v, err := e.EvalRow(nil)
	if err != nil {
		return nil, err
	}
	depth := 1
	for _, in := range inputs {
		depth = max(depth, in.(*Literal).depth+1)
	}
	if depth > maxFoldText {
		return &Literal{v: v, t: e.Type()}, nil
	}
	return &Literal{v: v, t: e.Type(), from: e, depth: depth}, nil
}
