package expr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Fused CAST between numbers and between DATE and TIMESTAMP: the
// conversions castKernel runs as typed loops, with the same arithmetic. A
// value that cannot be converted marks the batch bad and the reference
// reports it. Casts from and to VARCHAR and BOOLEAN stay per node.

type castOp uint8

const (
	castI32I64 castOp = iota + 1
	castI32F64
	castI64F64
	castI32F32
	castI64F32
	castF32F64
	castI64I32
	castF64I64
	castF64I32
	castF32I64
	castF32I32
	castF64F32
	castIntDec
	castDecDec
	castDecF64
	castDecI64
	castDecI32
	castDateTs
	castTsDate
	castTsTs
)

// castOpFor is the fused conversion from -> to, 0 when there is none.
func castOpFor(from, to arrow.DataType) castOp {
	f, t := from.ID(), to.ID()
	type pair struct{ f, t arrow.Type }
	ops := map[pair]castOp{
		{arrow.INT32, arrow.INT64}: castI32I64, {arrow.INT32, arrow.FLOAT64}: castI32F64,
		{arrow.INT64, arrow.FLOAT64}: castI64F64, {arrow.INT32, arrow.FLOAT32}: castI32F32,
		{arrow.INT64, arrow.FLOAT32}: castI64F32, {arrow.FLOAT32, arrow.FLOAT64}: castF32F64,
		{arrow.INT64, arrow.INT32}: castI64I32, {arrow.FLOAT64, arrow.INT64}: castF64I64,
		{arrow.FLOAT64, arrow.INT32}: castF64I32, {arrow.FLOAT32, arrow.INT64}: castF32I64,
		{arrow.FLOAT32, arrow.INT32}: castF32I32, {arrow.FLOAT64, arrow.FLOAT32}: castF64F32,
		{arrow.INT32, arrow.DECIMAL128}: castIntDec, {arrow.INT64, arrow.DECIMAL128}: castIntDec,
		{arrow.DECIMAL128, arrow.DECIMAL128}: castDecDec, {arrow.DECIMAL128, arrow.FLOAT64}: castDecF64,
		{arrow.DECIMAL128, arrow.INT64}: castDecI64, {arrow.DECIMAL128, arrow.INT32}: castDecI32,
		{arrow.DATE32, arrow.TIMESTAMP}: castDateTs, {arrow.TIMESTAMP, arrow.DATE32}: castTsDate,
		{arrow.TIMESTAMP, arrow.TIMESTAMP}: castTsTs,
	}
	return ops[pair{f, t}]
}

// castNode is CAST(e AS to) for a castOp.
type castNode struct {
	op     castOp
	e      fnode
	kind   vkind
	fs, ts int32 // DECIMAL scales: from, to
	p      int32 // DECIMAL precision of the target
	m, lim int64 // temporal: multiplier or divisor, and the range of a multiply
	down   bool  // temporal: divide by m (to a coarser unit)
	sc     *scratch
	v      vec
	i32    []int32
	i64    []int64
	f32    []float32
	f64    []float64
	d128   []num
}

func newCastNode(op castOp, e fnode, from, to arrow.DataType, sc *scratch) *castNode {
	x := &castNode{op: op, e: e, kind: kindOf(to), sc: sc}
	if d, ok := from.(*arrow.Decimal128Type); ok {
		x.fs = d.Scale
	}
	if d, ok := to.(*arrow.Decimal128Type); ok {
		x.ts, x.p = d.Scale, d.Precision
	}
	switch op {
	case castDateTs:
		x.m = unitsPerSecond(to.(*arrow.TimestampType).Unit) * 86400
		x.lim = math.MaxInt64 / x.m
	case castTsDate:
		x.m, x.down = unitsPerSecond(from.(*arrow.TimestampType).Unit)*86400, true
	case castTsTs:
		f := unitsPerSecond(from.(*arrow.TimestampType).Unit)
		t := unitsPerSecond(to.(*arrow.TimestampType).Unit)
		if t >= f {
			x.m = t / f
			x.lim = math.MaxInt64 / x.m
		} else {
			x.m, x.down = f/t, true
		}
	}
	return x
}

func (x *castNode) eval(c *fctx) *vec {
	e := x.e.eval(c)
	x.v = vec{kind: x.kind, mask: e.mask, valid: e.valid}
	if e.null {
		x.v.null = true
		return &x.v
	}
	n := c.n
	if e.mask == 0 {
		n = 1
	}
	bad := false
	switch x.op {
	case castI32I64:
		convertTo(x.outI64(n), e.i32[:n])
	case castI32F64:
		convertTo(x.outF64(n), e.i32[:n])
	case castI64F64:
		convertTo(x.outF64(n), e.i64[:n])
	case castI32F32:
		convertTo(x.outF32(n), e.i32[:n])
	case castI64F32:
		convertTo(x.outF32(n), e.i64[:n])
	case castF32F64:
		convertTo(x.outF64(n), e.f32[:n])
	case castI64I32:
		out := x.outI32(n)
		for i, v := range e.i64[:n] {
			out[i] = int32(v)
			bad = bad || v != int64(int32(v))
		}
	case castF64I64, castF32I64:
		out := x.outI64(n)
		for i := range out {
			t := math.Trunc(x.float(e, i))
			out[i] = int64(t)
			bad = bad || !(t >= -9.223372036854775808e18 && t < 9.223372036854775808e18)
		}
	case castF64I32, castF32I32:
		out := x.outI32(n)
		for i := range out {
			t := math.Trunc(x.float(e, i))
			out[i] = int32(t)
			bad = bad || !(t >= math.MinInt32 && t <= math.MaxInt32)
		}
	case castF64F32:
		out := x.outF32(n)
		for i, v := range e.f64[:n] {
			y := float32(v)
			out[i] = y
			bad = bad || math.IsInf(float64(y), 0) && !math.IsInf(v, 0)
		}
	case castIntDec:
		bad = x.intToDec(e, n)
	case castDecDec:
		bad = x.decToDec(e, n)
	case castDecF64:
		out := x.outF64(n)
		for i := range out {
			if e.wide {
				out[i] = decToFloat(e.d128[i], x.fs)
				continue
			}
			v := e.i64[i]
			if x.fs <= 22 && v >= -(1<<53) && v <= 1<<53 {
				out[i] = float64(v) / pow10Float[x.fs]
			} else {
				out[i] = decToFloat(num128(v), x.fs)
			}
		}
	case castDecI64, castDecI32:
		bad = x.decToInt(e, n)
	case castDateTs:
		out := x.outI64(n)
		for i, v := range e.i32[:n] {
			out[i] = int64(v) * x.m
			bad = bad || int64(v) > x.lim || int64(v) < -x.lim
		}
	case castTsDate:
		out := x.outI32(n)
		for i, v := range e.i64[:n] {
			out[i] = int32(floorDiv(v, x.m))
		}
	case castTsTs:
		out := x.outI64(n)
		for i, v := range e.i64[:n] {
			if x.down {
				out[i] = floorDiv(v, x.m)
				continue
			}
			out[i] = v * x.m
			bad = bad || v > x.lim || v < -x.lim
		}
	}
	if bad {
		c.b.bad = true
	}
	return &x.v
}

func (x *castNode) float(e *vec, i int) float64 {
	if e.kind == vF32 {
		return float64(e.f32[i])
	}
	return e.f64[i]
}

func (x *castNode) outI32(n int) []int32 {
	x.i32 = grow(x.sc, x.i32, n)
	x.v.i32 = x.i32
	return x.i32
}

func (x *castNode) outI64(n int) []int64 {
	x.i64 = grow(x.sc, x.i64, n)
	x.v.i64 = x.i64
	return x.i64
}

func (x *castNode) outF32(n int) []float32 {
	x.f32 = grow(x.sc, x.f32, n)
	x.v.f32 = x.f32
	return x.f32
}

func (x *castNode) outF64(n int) []float64 {
	x.f64 = grow(x.sc, x.f64, n)
	x.v.f64 = x.f64
	return x.f64
}

func (x *castNode) outD128(n int) []num {
	x.d128 = grow(x.sc, x.d128, n)
	x.v.wide, x.v.d128 = true, x.d128
	return x.d128
}

// decLimit is 10^p - 1 when the target's digits bind an int64, else 0.
func (x *castNode) decLimit() int64 {
	if x.p <= 18 {
		return pow10Int[x.p] - 1
	}
	return 0
}

// overLimit reports whether some value exceeds lim digits (lim 0: none can).
func overLimit(vals []int64, lim int64) bool {
	if lim == 0 {
		return false
	}
	var over int64
	for _, r := range vals {
		over |= (lim - r) | (r + lim)
	}
	return over < 0
}

// intToDec is intToDec over the chunk: narrow while x * 10^s fits int64.
func (x *castNode) intToDec(e *vec, n int) bool {
	if x.ts <= 18 {
		out := x.outI64(n)
		m := pow10Int[x.ts]
		wide := false
		for i := range out {
			v := int64(0)
			if e.kind == vI32 {
				v = int64(e.i32[i])
			} else {
				v = e.i64[i]
			}
			r, o := mulOvf(v, m)
			out[i] = r
			wide = wide || o
		}
		if !wide {
			return overLimit(out, x.decLimit())
		}
	}
	out := x.outD128(n)
	bad := false
	for i := range out {
		v := int64(0)
		if e.kind == vI32 {
			v = int64(e.i32[i])
		} else {
			v = e.i64[i]
		}
		r, ok := decMul(decimal128.FromI64(v), pow10Num[x.ts])
		out[i] = r
		bad = bad || !ok || !decFits(r, x.p)
	}
	return bad
}

// decToDec is decRescale plus the precision check.
func (x *castNode) decToDec(e *vec, n int) bool {
	d := x.ts - x.fs
	if !e.wide && d >= -18 && d <= 18 {
		out := x.outI64(n)
		wide := false
		switch {
		case d >= 0:
			m := pow10Int[d]
			for i, v := range e.i64[:n] {
				r, o := mulOvf(v, m)
				out[i] = r
				wide = wide || o
			}
		default:
			p := pow10Int[-d]
			for i, v := range e.i64[:n] {
				out[i] = roundDiv64(v, p)
			}
		}
		if !wide {
			return overLimit(out, x.decLimit())
		}
	}
	src := widen(x.sc, &x.d128, e, n)
	out := x.outD128(n)
	bad := false
	for i, v := range src[:n] {
		r, ok := decRescale(v, x.fs, x.ts)
		out[i] = r
		bad = bad || !ok || !decFits(r, x.p)
	}
	return bad
}

// decToInt truncates toward zero (decTrunc).
func (x *castNode) decToInt(e *vec, n int) bool {
	bad := false
	to := func(i int, v int64, ok bool) {
		if x.op == castDecI32 {
			x.i32[i] = int32(v)
			bad = bad || !ok || v != int64(int32(v))
			return
		}
		x.i64[i] = v
		bad = bad || !ok
	}
	if x.op == castDecI32 {
		x.outI32(n)
	} else {
		x.outI64(n)
	}
	if !e.wide && x.fs <= 18 {
		p := pow10Int[x.fs]
		for i, v := range e.i64[:n] {
			to(i, v/p, true)
		}
		return bad
	}
	for i, v := range widen(x.sc, &x.d128, e, n)[:n] {
		r, ok := decTrunc(v, x.fs)
		to(i, r, ok)
	}
	return bad
}

// fusedNumber is a column type the widening casts read and write.
type fusedNumber interface {
	~int32 | ~int64 | ~float32 | ~float64
}

// convertTo writes each value of src into dst as D: the casts that cannot
// fail (widening, or to a float). One instance per type pair, so each stays
// a plain typed loop.
func convertTo[D, S fusedNumber](dst []D, src []S) {
	for i, v := range src {
		dst[i] = D(v)
	}
}
