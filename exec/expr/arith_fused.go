package expr

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// mulIntByConst is the fused kernel for an integer column times a DECIMAL
// constant (price * 0.908): the column's implicit widening to DECIMAL(19,0)
// is folded into the multiply instead of building a 16-byte-per-row
// intermediate, and each product is one 64x64->128 multiply. It applies
// only to an unnarrowed product, where p1 + p2 <= 38 guarantees no
// overflow, and to a constant that fits 64 bits. ok=false: not this shape.
func (a *Arith) mulIntByConst(mem memory.Allocator, rec arrow.RecordBatch) (out arrow.Array, ok bool, err error) {
	if a.op != '*' || a.dec.s != a.dec.s1+a.dec.s2 || a.t.(*arrow.Decimal128Type).Precision >= maxPrecision {
		return nil, false, nil
	}
	colSide, litSide := a.l, a.r
	if _, isLit := colSide.(*Literal); isLit {
		colSide, litSide = litSide, colSide
	}
	lit, isLit := litSide.(*Literal)
	c, isCast := colSide.(*Cast)
	if !isLit || lit.v == nil || !isCast || !c.implicit || !isInt(c.e.Type()) {
		return nil, false, nil
	}
	m := lit.v.(decimal128.Num)
	if !fitsInt64(m) {
		return nil, false, nil
	}
	k := int64(m.LowBits())
	in, err := c.e.EvalColumnar(mem, rec)
	if err != nil {
		return nil, true, err
	}
	defer in.Release()
	n := in.Len()
	buf, dst := newValues[decimal128.Num](mem, n)
	switch x := in.(type) {
	case *array.Int64:
		for i, v := range x.Int64Values() {
			hi, lo := bits.Mul64(uint64(v), uint64(k))
			dst[i] = decimal128.New(int64(hi)-(v>>63)&k-(k>>63)&v, lo)
		}
	case *array.Int32:
		for i, v32 := range x.Int32Values() {
			v := int64(v32)
			hi, lo := bits.Mul64(uint64(v), uint64(k))
			dst[i] = decimal128.New(int64(hi)-(v>>63)&k-(k>>63)&v, lo)
		}
	default:
		buf.Release()
		return nil, false, nil
	}
	valid, nulls := andValidity(mem, n, in)
	return finish(a.t, n, valid, nulls, buf), true, nil
}
