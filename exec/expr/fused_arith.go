package expr

import (
	"math"
)

// Fused arithmetic: + - * / % over INT, BIGINT, DOUBLE and DECIMAL
// (fused_dec.go), and unary minus.

// intKernel runs one integer operation over n rows into out, reporting
// whether any overflowed (accumulated branch-free). A zero divisor is
// replaced by 1 (its row is NULL: the caller masks it) because Go's
// integer division by zero panics. The per-node path (intColumns) runs
// the same loops.
func intKernel[T sint](op byte, x []T, mx int, y []T, my int, out []T) bool {
	var acc T
	bad := false
	switch op {
	case '+':
		for i := range out {
			p, q := x[i&mx], y[i&my]
			r := p + q
			acc |= (p ^ r) & (q ^ r)
			out[i] = r
		}
	case '-':
		for i := range out {
			p, q := x[i&mx], y[i&my]
			r := p - q
			acc |= (p ^ q) & (p ^ r)
			out[i] = r
		}
	case '*':
		for i := range out {
			r, o := mulOvf(x[i&mx], y[i&my])
			out[i] = r
			bad = bad || o
		}
	case '/':
		m := minOf[T]()
		for i := range out {
			p, q := x[i&mx], y[i&my]
			if q == 0 {
				q = 1
			}
			bad = bad || (q == -1 && p == m)
			out[i] = p / q
		}
	default:
		for i := range out {
			q := y[i&my]
			if q == 0 {
				q = 1
			}
			out[i] = x[i&mx] % q
		}
	}
	return bad || acc < 0
}

// floatKernel is floatOp over n rows.
func floatKernel(op byte, x []float64, mx int, y []float64, my int, out []float64) {
	switch op {
	case '+':
		for i := range out {
			out[i] = x[i&mx] + y[i&my]
		}
	case '-':
		for i := range out {
			out[i] = x[i&mx] - y[i&my]
		}
	case '*':
		for i := range out {
			out[i] = x[i&mx] * y[i&my]
		}
	case '/':
		for i := range out {
			out[i] = x[i&mx] / y[i&my]
		}
	default:
		for i := range out {
			out[i] = math.Mod(x[i&mx], y[i&my])
		}
	}
}

// arithNode is + - * / % of two operands of the result's kind.
type arithNode struct {
	op    byte
	kind  vkind
	l, r  fnode
	dec   decOp     // vDec: the 128-bit definition
	nd    narrowDec // vDec: its int64 form
	sc    *scratch
	v     vec
	i32   []int32
	i64   []int64
	f64   []float64
	d128  []num
	valid []uint64
	zero  []uint64
	xs    []int64 // scaled narrow operands
	ys    []int64
	xw    []num // widened operands
	yw    []num
}

func (a *arithNode) eval(c *fctx) *vec {
	x, y := a.l.eval(c), a.r.eval(c)
	n := c.n
	a.v = vec{kind: a.kind, mask: -1}
	if x.null || y.null {
		a.v.null, a.v.mask = true, 0
		return &a.v
	}
	a.v.valid = andValid(a.sc, &a.valid, x, y, n)
	if a.op == '/' || a.op == '%' {
		if !a.maskZeros(y, n) {
			a.v.null, a.v.mask = true, 0
			return &a.v
		}
	}
	bad := false
	switch a.kind {
	case vI32:
		a.i32 = grow(a.sc, a.i32, n)
		bad = intKernel(a.op, x.i32, x.mask, y.i32, y.mask, a.i32)
		a.v.i32 = a.i32
	case vI64:
		a.i64 = grow(a.sc, a.i64, n)
		bad = intKernel(a.op, x.i64, x.mask, y.i64, y.mask, a.i64)
		a.v.i64 = a.i64
	case vF64:
		a.f64 = grow(a.sc, a.f64, n)
		floatKernel(a.op, x.f64, x.mask, y.f64, y.mask, a.f64)
		a.v.f64 = a.f64
	default:
		bad = a.evalDec(x, y, n)
	}
	if bad {
		c.b.bad = true
	}
	return &a.v
}

// maskZeros makes the rows whose divisor is zero NULL (x / 0 and x % 0
// are NULL). false: the divisor is the constant 0, every row is NULL.
func (a *arithNode) maskZeros(y *vec, n int) bool {
	nw := nwords(n)
	a.zero = grow(a.sc, a.zero, nw)
	z := a.zero
	clear(z)
	m := n
	if y.mask == 0 {
		m = 1
	}
	for i := 0; i < m; i++ {
		var zero bool
		switch {
		case y.kind == vI32:
			zero = y.i32[i] == 0
		case y.kind == vF64:
			zero = y.f64[i] == 0
		case y.kind == vDec && y.wide:
			zero = y.d128[i].Sign() == 0
		default:
			zero = y.i64[i] == 0
		}
		z[i>>6] |= b2w(zero) << (i & 63)
	}
	if y.mask == 0 {
		return z[0] == 0
	}
	any := uint64(0)
	for _, w := range z {
		any |= w
	}
	if any == 0 {
		return true
	}
	// a.valid may be the words andValid returned: each word is read
	// before it is written.
	base := a.v.valid
	a.valid = grow(a.sc, a.valid, nw)
	for w := range a.valid {
		ok := ^uint64(0)
		if base != nil {
			ok = base[w]
		}
		a.valid[w] = ok &^ z[w]
	}
	a.v.valid = a.valid
	return true
}

// negNode is unary minus.
type negNode struct {
	e    fnode
	kind vkind
	sc   *scratch
	v    vec
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	d128 []num
}

func (x *negNode) eval(c *fctx) *vec {
	e := x.e.eval(c)
	x.v = vec{kind: x.kind, mask: -1, valid: e.valid}
	if e.null {
		x.v.null, x.v.mask = true, 0
		return &x.v
	}
	n := c.n
	if e.mask == 0 {
		n = 1
		x.v.mask = 0
	}
	bad := false
	switch x.kind {
	case vI32:
		x.i32 = grow(x.sc, x.i32, n)
		for i, v := range e.i32[:n] {
			bad = bad || v == math.MinInt32
			x.i32[i] = -v
		}
		x.v.i32 = x.i32
	case vI64:
		x.i64 = grow(x.sc, x.i64, n)
		for i, v := range e.i64[:n] {
			bad = bad || v == math.MinInt64
			x.i64[i] = -v
		}
		x.v.i64 = x.i64
	case vF32:
		x.f32 = grow(x.sc, x.f32, n)
		for i, v := range e.f32[:n] {
			x.f32[i] = -v
		}
		x.v.f32 = x.f32
	case vF64:
		x.f64 = grow(x.sc, x.f64, n)
		for i, v := range e.f64[:n] {
			x.f64[i] = -v
		}
		x.v.f64 = x.f64
	case vDec:
		x.negDec(e, n)
	}
	if bad {
		c.b.bad = true
	}
	return &x.v
}

// negDec negates DECIMALs; -(MinInt64) needs 128 bits.
func (x *negNode) negDec(e *vec, n int) {
	if !e.wide {
		x.i64 = grow(x.sc, x.i64, n)
		wide := false
		for i, v := range e.i64[:n] {
			wide = wide || v == math.MinInt64
			x.i64[i] = -v
		}
		if !wide {
			x.v.i64 = x.i64
			return
		}
	}
	src := widen(x.sc, &x.d128, e, n)
	x.d128 = grow(x.sc, x.d128, n)
	for i, v := range src[:n] {
		x.d128[i] = v.Negate()
	}
	x.v.wide, x.v.d128 = true, x.d128
}
