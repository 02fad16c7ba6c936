package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The leaves of a fused program: input columns, subtrees evaluated by
// their own EvalColumnar (the nodes without a fused kernel), and
// constants.

// leaf reads a column of the batch (col >= 0) or the result of e's
// per-node evaluation (col < 0, or a dictionary-encoded column, which
// e decodes), once per batch, into the vec of a chunk. Dense chunks of
// fixed-width columns are read in place; compacted ones are gathered.
type leaf struct {
	e    Expr
	col  int
	slot int // its array in fbatch.arrays
	kind vkind
	v    vec

	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	d128 []num
	b    []uint64
	vb   []uint64
	sc   *scratch
}

func (l *leaf) eval(c *fctx) *vec {
	v := &l.v
	*v = vec{kind: l.kind, mask: -1}
	arr := c.b.array(l)
	if arr == nil || arr.DataType().ID() == arrow.NULL {
		v.null = true
		return v
	}
	data := arr.Data()
	aoff := data.Offset()
	n := c.n
	if arr.NullN() > 0 {
		l.vb = grow(l.sc, l.vb, nwords(n))
		if c.rows == nil {
			loadBits(l.vb, arr.NullBitmapBytes(), aoff+c.off, n)
		} else {
			gatherBits(l.vb, arr.NullBitmapBytes(), aoff, c.rows)
		}
		v.valid = l.vb
	}
	switch l.kind {
	case vI32:
		v.i32 = readFixed(l.sc, &l.i32, arrow.GetValues[int32](data, 1), c)
	case vI64:
		v.i64 = readFixed(l.sc, &l.i64, arrow.GetValues[int64](data, 1), c)
	case vF32:
		v.f32 = readFixed(l.sc, &l.f32, arrow.GetValues[float32](data, 1), c)
	case vF64:
		v.f64 = readFixed(l.sc, &l.f64, arrow.GetValues[float64](data, 1), c)
	case vDec:
		l.readDec(v, arrow.GetValues[num](data, 1), c)
	case vBool:
		l.b = grow(l.sc, l.b, nwords(n))
		if c.rows == nil {
			loadBits(l.b, data.Buffers()[1].Bytes(), aoff+c.off, n)
		} else {
			gatherBits(l.b, data.Buffers()[1].Bytes(), aoff, c.rows)
		}
		v.b = l.b
	case vStr:
		v.str = strView{arr: arr.(*array.String), off: c.off, rows: c.rows}
	}
	return v
}

// readFixed is the chunk's values: a subslice of the column when dense,
// else gathered into *own.
func readFixed[T pod](sc *scratch, own *[]T, vals []T, c *fctx) []T {
	if c.rows == nil {
		return vals[c.off : c.off+c.n]
	}
	*own = grow(sc, *own, c.n)
	out := *own
	for j, r := range c.rows {
		out[j] = vals[r]
	}
	return out
}

// readDec loads a DECIMAL chunk narrow (the low words, when every value's
// high word is its sign extension) or, failing that, wide.
func (l *leaf) readDec(v *vec, vals []num, c *fctx) {
	n := c.n
	l.i64 = grow(l.sc, l.i64, n)
	out := l.i64
	var bad int64
	if c.rows == nil {
		src := vals[c.off : c.off+n]
		for i, x := range src {
			lo := int64(x.LowBits())
			bad |= x.HighBits() ^ lo>>63
			out[i] = lo
		}
	} else {
		for j, r := range c.rows {
			x := vals[r]
			lo := int64(x.LowBits())
			bad |= x.HighBits() ^ lo>>63
			out[j] = lo
		}
	}
	if bad == 0 {
		v.i64 = out
		return
	}
	v.wide = true
	v.d128 = readFixed(l.sc, &l.d128, vals, c)
}

// strView reads the strings of a chunk from an Arrow column, or is the
// one string of a constant (arr nil).
type strView struct {
	arr  *array.String
	off  int
	rows []int32
	lit  string
}

func (s *strView) at(i int) string {
	if s.arr == nil {
		return s.lit
	}
	if s.rows != nil {
		return s.arr.Value(int(s.rows[i]))
	}
	return s.arr.Value(s.off + i)
}

// constNode is a literal: one value, never an array. ok is false for a
// constant of a type the fused kernels do not hold.
type constNode struct{ v vec }

func newConstNode(l *Literal) (*constNode, bool) {
	k := kindOf(l.t)
	c := &constNode{v: vec{kind: k, mask: 0}}
	if l.v == nil {
		c.v.null = true
		return c, k != vNone || isNull(l.t)
	}
	switch x := l.v.(type) {
	case bool:
		c.v.b = []uint64{0}
		if x {
			c.v.b[0] = ^uint64(0)
		}
	case int32:
		c.v.i32 = []int32{x}
	case arrow.Date32:
		c.v.i32 = []int32{int32(x)}
	case int64:
		c.v.i64 = []int64{x}
	case arrow.Timestamp:
		c.v.i64 = []int64{int64(x)}
	case float32:
		c.v.f32 = []float32{x}
	case float64:
		c.v.f64 = []float64{x}
	case num:
		if fitsInt64(x) {
			c.v.i64 = []int64{int64(x.LowBits())}
		} else {
			c.v.wide = true
			c.v.d128 = []num{x}
		}
	case string:
		c.v.str = strView{lit: x}
	default:
		return nil, false
	}
	return c, k != vNone
}

func (c *constNode) eval(*fctx) *vec { return &c.v }
