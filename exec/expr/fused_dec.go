package expr

// Fused DECIMAL arithmetic: a chunk is computed in int64 (narrowDec) when
// both operands are narrow and no exact result needs more than 63 bits;
// otherwise that chunk is computed in 128 bits with decOp, the per-node
// path's own definition, so the two agree wherever int64 gives up.

// evalDec computes the chunk into a.v; bad: some result overflows the
// result type (the reference reports the error, or finds the row NULL).
func (a *arithNode) evalDec(x, y *vec, n int) bool {
	if !x.wide && !y.wide && a.nd.ok {
		if out, wide, bad := a.decNarrow(x, y, n); !wide {
			a.v.i64 = out
			return bad
		}
	}
	return a.decWide(x, y, n)
}

// scaleVals is src times mult (one value for a constant), in *own when
// mult is not 1; ok=false when a product leaves int64.
func scaleVals(sc *scratch, own *[]int64, src []int64, mask int, mult int64, n int) ([]int64, bool) {
	if mult == 1 {
		return src, true
	}
	if mask == 0 {
		n = 1
	}
	*own = grow(sc, *own, n)
	o := *own
	bad := false
	for i, v := range src[:n] {
		r, ovf := mulOvf(v, mult)
		o[i] = r
		bad = bad || ovf
	}
	return o, !bad
}

// decNarrow is narrowDec.apply over the chunk, one loop per operator;
// wide: some exact result needs more than int64.
func (a *arithNode) decNarrow(x, y *vec, n int) (out []int64, wide, bad bool) {
	nd := a.nd
	xs, mx := x.i64, x.mask
	ys, my := y.i64, y.mask
	if nd.op != '*' && nd.op != '/' {
		var ok1, ok2 bool
		xs, ok1 = scaleVals(a.sc, &a.xs, xs, mx, nd.ux, n)
		ys, ok2 = scaleVals(a.sc, &a.ys, ys, my, nd.uy, n)
		if !ok1 || !ok2 {
			return nil, true, false
		}
	}
	a.i64 = grow(a.sc, a.i64, n)
	out = a.i64
	var acc int64
	switch nd.op {
	case '+':
		for i := range out {
			p, q := xs[i&mx], ys[i&my]
			r := p + q
			acc |= (p ^ r) & (q ^ r)
			out[i] = r
		}
	case '-':
		for i := range out {
			p, q := xs[i&mx], ys[i&my]
			r := p - q
			acc |= (p ^ q) & (p ^ r)
			out[i] = r
		}
	case '*':
		for i := range out {
			r, o := mulOvf(xs[i&mx], ys[i&my])
			out[i] = r
			wide = wide || o
		}
	case '/':
		for i := range out {
			q := ys[i&my]
			if q == 0 { // NULL (masked by the caller)
				out[i] = 0
				continue
			}
			r, ok := divRound64(xs[i&mx], q, nd.e)
			out[i] = r
			wide = wide || !ok
		}
	default:
		for i := range out {
			q := ys[i&my]
			if q == 0 {
				q = 1
			}
			out[i] = xs[i&mx] % q
		}
	}
	if wide || acc < 0 {
		return nil, true, false
	}
	if nd.down != 0 {
		for i, r := range out {
			out[i] = roundDiv64(r, nd.down)
		}
	}
	if nd.lim != 0 {
		chk := nd.lim - 1
		var over int64
		for _, r := range out {
			over |= (chk - r) | (r + chk)
		}
		bad = over < 0
	}
	return out, false, bad
}

// decWide computes the chunk in 128 bits.
func (a *arithNode) decWide(x, y *vec, n int) (bad bool) {
	a.d128 = grow(a.sc, a.d128, n)
	out := a.d128
	a.v.wide, a.v.d128 = true, out
	if a.op == '/' && !x.wide && !y.wide && a.nd.e >= 0 && a.nd.e <= 18 {
		// Narrow operands whose quotient needs more than 63 bits: a
		// two-step long division instead of math/big.
		xs, ys := x.i64, y.i64
		for i := range out {
			q := ys[i&y.mask]
			if q == 0 {
				out[i] = num{}
				continue
			}
			r, ok := divRound128(xs[i&x.mask], q, a.nd.e)
			out[i] = r
			bad = bad || !ok || !decFits(r, a.dec.p)
		}
		return bad
	}
	xw, yw := widen(a.sc, &a.xw, x, n), widen(a.sc, &a.yw, y, n)
	div := a.op == '/' || a.op == '%'
	for i := range out {
		q := yw[i&y.mask]
		if div && q.Sign() == 0 {
			out[i] = num{}
			continue
		}
		r, st := a.dec.apply(xw[i&x.mask], q)
		out[i] = r
		bad = bad || st == opOverflow
	}
	return bad
}
