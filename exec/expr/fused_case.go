package expr

// Fused CASE and COALESCE. Each row takes one arm; an arm is evaluated
// only on the rows that take it (compacted), so an arm that would fail on
// rows it does not take (1/x under WHEN x <> 0) is never run there, as on
// the row path, and costs nothing for them.

// sink merges the arms' values into the chunk's result.
type sink struct {
	kind  vkind
	sc    *scratch
	v     vec
	b     []uint64
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	d128  []num
	valid []uint64
}

// reset prepares n rows of the result, every row NULL.
func (s *sink) reset(n int, wide bool) {
	s.v = vec{kind: s.kind, mask: -1, wide: wide}
	switch {
	case s.kind == vBool:
		s.b = grow(s.sc, s.b, nwords(n))
		s.v.b = s.b
	case s.kind == vI32:
		s.i32 = grow(s.sc, s.i32, n)
		s.v.i32 = s.i32
	case s.kind == vI64 || s.kind == vDec && !wide:
		s.i64 = grow(s.sc, s.i64, n)
		s.v.i64 = s.i64
	case s.kind == vF32:
		s.f32 = grow(s.sc, s.f32, n)
		s.v.f32 = s.f32
	case s.kind == vF64:
		s.f64 = grow(s.sc, s.f64, n)
		s.v.f64 = s.f64
	default:
		s.d128 = grow(s.sc, s.d128, n)
		s.v.d128 = s.d128
	}
	s.valid = grow(s.sc, s.valid, nwords(n))
	clear(s.valid)
}

var (
	allOnes  = []uint64{^uint64(0)}
	allZeros = []uint64{0}
)

// put writes src's values and validity at the positions pos.
func (s *sink) put(src *vec, pos []int32) {
	switch {
	case src.null:
		scatterBits(s.valid, allZeros, 0, pos)
		return
	case src.valid == nil:
		scatterBits(s.valid, allOnes, 0, pos)
	default:
		scatterBits(s.valid, src.valid, -1, pos)
	}
	switch {
	case s.kind == vBool:
		scatterBits(s.b, src.b, src.mask, pos)
	case s.kind == vI32:
		scatterVals(s.i32, src.i32, src.mask, pos)
	case s.kind == vI64 || s.kind == vDec && !s.v.wide:
		scatterVals(s.i64, src.i64, src.mask, pos)
	case s.kind == vF32:
		scatterVals(s.f32, src.f32, src.mask, pos)
	case s.kind == vF64:
		scatterVals(s.f64, src.f64, src.mask, pos)
	case src.wide:
		scatterVals(s.d128, src.d128, src.mask, pos)
	default:
		for j, p := range pos {
			s.d128[p] = num128(src.i64[j&src.mask])
		}
	}
}

// result is the merged vec; no validity when every row is valid.
func (s *sink) result(n int) *vec {
	if countTrue(s.valid, n) < n {
		s.v.valid = s.valid
	}
	return &s.v
}

// arms evaluates each arm on the rows whose bit is set in picks[k] (arm
// nil: NULL there) and merges them. An arm taken by every row is the
// result as it is.
type arms struct {
	sink
	res   []*vec
	pos   [][]int32
	rows  [][]int32
	picks [][]uint64
}

func newArms(k int, kind vkind, sc *scratch) arms {
	return arms{sink: sink{kind: kind, sc: sc}, res: make([]*vec, k), pos: make([][]int32, k),
		rows: make([][]int32, k), picks: make([][]uint64, k)}
}

func (a *arms) eval(c *fctx, nodes []fnode) *vec {
	n := c.n
	wide := false
	for k, nd := range nodes {
		a.res[k] = nil
		m := countTrue(a.picks[k], n)
		if m == 0 || nd == nil { // nil: ELSE NULL, as reset leaves it
			continue
		}
		if m == n {
			return nd.eval(c)
		}
		a.pos[k] = grow(a.sc, a.pos[k], m)
		a.rows[k] = grow(a.sc, a.rows[k], m)
		cc, pos := c.compact(a.picks[k], a.pos[k], a.rows[k])
		a.pos[k] = pos
		a.res[k] = nd.eval(&cc)
		wide = wide || a.res[k].wide
	}
	a.reset(n, wide)
	for k, r := range a.res {
		if r != nil && !r.null {
			a.put(r, a.pos[k])
		}
	}
	return a.result(n)
}

// caseNode is a searched CASE (the simple form is built as one).
type caseNode struct {
	conds []truthNode
	thens []fnode // the arms: one per WHEN, then ELSE (nil: NULL)
	a     arms
	und   []uint64
	cpos  []int32
	crows []int32
}

func (x *caseNode) eval(c *fctx) *vec {
	n := c.n
	nw := nwords(n)
	sc := x.a.sc
	x.und = grow(sc, x.und, nw)
	fillWords(x.und, n, true)
	for k, cond := range x.conds {
		x.a.picks[k] = grow(sc, x.a.picks[k], nw)
		pick := x.a.picks[k]
		m := countTrue(x.und, n)
		switch {
		case m == 0:
			clear(pick)
			continue
		case m == n || !compactPays(m, n):
			t, _ := cond.evalTruth(c)
			for w := range pick {
				pick[w] = t[w] & x.und[w]
			}
		default:
			x.cpos = grow(sc, x.cpos, n)
			x.crows = grow(sc, x.crows, n)
			cc, pos := c.compact(x.und, x.cpos, x.crows)
			t, _ := cond.evalTruth(&cc)
			clear(pick)
			for j, p := range pos {
				pick[p>>6] |= (t[j>>6] >> (j & 63) & 1) << (p & 63)
			}
		}
		for w := range pick {
			x.und[w] &^= pick[w]
		}
	}
	last := len(x.conds)
	x.a.picks[last] = grow(sc, x.a.picks[last], nw)
	copy(x.a.picks[last], x.und)
	return x.a.eval(c, x.thens)
}

// coalesceNode is COALESCE: each argument runs on the rows every earlier
// one left NULL.
type coalesceNode struct {
	args []fnode
	a    arms
	und  []uint64
}

func (x *coalesceNode) eval(c *fctx) *vec {
	n := c.n
	nw := nwords(n)
	sc := x.a.sc
	x.und = grow(sc, x.und, nw)
	fillWords(x.und, n, true)
	wide := false
	for k, arg := range x.args {
		x.a.res[k] = nil
		m := countTrue(x.und, n)
		if m == 0 {
			continue
		}
		var r *vec
		if m == n {
			r = arg.eval(c)
			if r.valid == nil && !r.null {
				return r // the first argument has no NULLs
			}
			x.a.pos[k] = grow(sc, x.a.pos[k], n)
			for i := range x.a.pos[k] {
				x.a.pos[k][i] = int32(i)
			}
		} else {
			x.a.pos[k] = grow(sc, x.a.pos[k], m)
			x.a.rows[k] = grow(sc, x.a.rows[k], m)
			var cc fctx
			cc, x.a.pos[k] = c.compact(x.und, x.a.pos[k], x.a.rows[k])
			r = arg.eval(&cc)
		}
		x.a.res[k] = r
		wide = wide || r.wide
		for j, p := range x.a.pos[k] {
			if !r.null && (r.valid == nil || bitSet(r.valid, j)) {
				x.und[p>>6] &^= 1 << (p & 63)
			}
		}
	}
	x.a.reset(n, wide)
	for k, r := range x.a.res {
		if r != nil && !r.null {
			x.a.put(r, x.a.pos[k])
		}
	}
	return x.a.result(n)
}
