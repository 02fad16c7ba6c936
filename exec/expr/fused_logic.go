package expr

// Fused BOOLEAN nodes: AND / OR (as values, with SQL's three-valued
// logic, and as predicates, where only TRUE matters), NOT and IS NULL.

// compactShare: a later operand of AND / OR / CASE / COALESCE runs on a
// compacted chunk of the rows still undecided when they are at most
// 1/compactShare of the chunk; above that, gathering its inputs costs
// more than evaluating the rows that are already decided.
const compactShare = 4

func compactPays(m, n int) bool { return m*compactShare <= n }

// okWord is word w of v's validity.
func okWord(v *vec, w int) uint64 {
	switch {
	case v.null:
		return 0
	case v.valid == nil:
		return ^uint64(0)
	}
	return v.valid[w]
}

// truthNode evaluates a BOOLEAN expression as its TRUE and FALSE sets
// (NULL in neither): all that WHERE, a join condition and CASE WHEN ask of
// it, the FALSE set deciding where the rest of an AND chain must still run.
// The sets' words belong to the node.
type truthNode interface {
	evalTruth(c *fctx) (t, f []uint64)
}

// truthOf is the TRUE and FALSE sets of any BOOLEAN node.
type truthOf struct {
	e    fnode
	sc   *scratch
	t, f []uint64
}

func (x *truthOf) evalTruth(c *fctx) (t, f []uint64) {
	v := x.e.eval(c)
	nw := nwords(c.n)
	x.t = grow(x.sc, x.t, nw)
	x.f = grow(x.sc, x.f, nw)
	for w := range x.t {
		if v.null {
			x.t[w], x.f[w] = 0, 0
			continue
		}
		b, ok := v.b[w&v.mask], okWord(v, w)
		x.t[w], x.f[w] = b&ok, ^b&ok
	}
	return x.t, x.f
}

// junction is a flattened chain of ANDs (or ORs) as a predicate. Each
// operand after the first runs only on the rows the row path evaluates it
// on, those the chain has not decided yet (no operand FALSE so far for
// AND, none TRUE for OR): on a compacted chunk when they are few, on the
// whole chunk otherwise, not at all once there are none. So an operand
// that would fail on a row decided earlier is never evaluated there.
type junction struct {
	and       bool
	kids      []truthNode
	sc        *scratch
	t, f      []uint64
	open      []uint64
	pos, rows []int32
}

func (j *junction) evalTruth(c *fctx) (t, f []uint64) {
	n := c.n
	nw := nwords(n)
	j.t = grow(j.sc, j.t, nw)
	j.f = grow(j.sc, j.f, nw)
	j.open = grow(j.sc, j.open, nw)
	t0, f0 := j.kids[0].evalTruth(c)
	copy(j.t, t0[:nw])
	copy(j.f, f0[:nw])
	// decided is the set that closes a row: FALSE for AND, TRUE for OR.
	decided := j.f
	if !j.and {
		decided = j.t
	}
	for _, k := range j.kids[1:] {
		for w := range j.open {
			j.open[w] = ^decided[w]
		}
		m := countTrue(j.open, n)
		if m == 0 {
			break
		}
		if m == n || !compactPays(m, n) {
			// Rows already decided keep their answer whatever k says there.
			wasBad := c.b.bad
			tk, fk := k.evalTruth(c)
			if !mayRetryCompacted(c, m, wasBad) {
				for w := range j.t {
					if j.and {
						j.t[w] &= tk[w]
						j.f[w] |= fk[w]
					} else {
						j.t[w] |= tk[w]
						j.f[w] &= fk[w]
					}
				}
				continue
			}
		}
		j.pos = grow(j.sc, j.pos, n)
		j.rows = grow(j.sc, j.rows, n)
		cc, pos := c.compact(j.open, j.pos, j.rows)
		tk, fk := k.evalTruth(&cc)
		for i, p := range pos {
			bit := uint64(1) << (p & 63)
			ti, fi := bitSet(tk, i), bitSet(fk, i)
			if j.and {
				if !ti {
					j.t[p>>6] &^= bit
				}
				if fi {
					j.f[p>>6] |= bit
				}
			} else {
				if ti {
					j.t[p>>6] |= bit
				}
				if !fi {
					j.f[p>>6] &^= bit
				}
			}
		}
	}
	return j.t, j.f
}

// logicNode is AND / OR as a value (NULL where SQL says so). The right
// operand runs only on the rows the left one leaves undecided, compacted
// when they are few.
type logicNode struct {
	and       bool
	l, r      fnode
	sc        *scratch
	v         vec
	b, valid  []uint64
	und       []uint64
	rb, rv    []uint64
	pos, rows []int32
}

func (g *logicNode) eval(c *fctx) *vec {
	n := c.n
	nw := nwords(n)
	l := g.l.eval(c)
	g.und = grow(g.sc, g.und, nw)
	for w := range g.und {
		lb, lok := uint64(0), okWord(l, w)
		if !l.null {
			lb = l.b[w&l.mask]
		}
		if g.and {
			g.und[w] = ^(^lb & lok) // not known FALSE
		} else {
			g.und[w] = ^(lb & lok) // not known TRUE
		}
	}
	g.b = grow(g.sc, g.b, nw)
	g.valid = grow(g.sc, g.valid, nw)
	g.v = vec{kind: vBool, mask: -1, b: g.b}
	m := countTrue(g.und, n)
	if m == 0 {
		fillWords(g.b, n, !g.and)
		return &g.v
	}
	var r *vec
	whole := m == n || !compactPays(m, n)
	if whole {
		wasBad := c.b.bad
		r = g.r.eval(c)
		whole = !mayRetryCompacted(c, m, wasBad)
	}
	if !whole {
		g.pos = grow(g.sc, g.pos, n)
		g.rows = grow(g.sc, g.rows, n)
		cc, pos := c.compact(g.und, g.pos, g.rows)
		rc := g.r.eval(&cc)
		// The rows left out are decided by l whatever r holds there.
		g.rb = grow(g.sc, g.rb, nw)
		g.rv = grow(g.sc, g.rv, nw)
		scatterBool(g.rb, g.rv, rc, pos)
		r = &vec{kind: vBool, mask: -1, b: g.rb, valid: g.rv}
	}
	all := ^uint64(0)
	for w := range g.b {
		lok, rok := okWord(l, w), okWord(r, w)
		var lb, rb uint64
		if !l.null {
			lb = l.b[w&l.mask]
		}
		if !r.null {
			rb = r.b[w&r.mask]
		}
		lt, rt := lb&lok, rb&rok
		var ok uint64
		if g.and {
			ok = lok&rok | ^lb&lok | ^rb&rok
			g.b[w] = lt & rt
		} else {
			ok = lok&rok | lt | rt
			g.b[w] = lt | rt
		}
		g.valid[w] = ok
		if w == nw-1 {
			ok |= ^tailMask(n)
		}
		all &= ok
	}
	if all != ^uint64(0) {
		g.v.valid = g.valid
	}
	return &g.v
}

// mayRetryCompacted is called after a later operand of AND / OR ran over
// the whole chunk, m of whose rows are undecided (wasBad: the batch had
// failed before). Over the whole chunk the operand also runs on rows the
// row path never evaluates it on, where it may fail (an overflow under a
// guard: COALESCE(ok, FALSE) AND big * 10 > 0); such a failure is the
// batch's only if it happens on an undecided row. So when the operand
// failed and some rows were decided, it clears the failure and reports
// that the caller must evaluate the compacted undecided rows instead.
func mayRetryCompacted(c *fctx, m int, wasBad bool) bool {
	if c.b.bad && !wasBad && m < c.n {
		c.b.bad = false
		return true
	}
	return false
}

// scatterBool writes a BOOLEAN vec's values and validity at positions pos.
func scatterBool(db, dv []uint64, src *vec, pos []int32) {
	switch {
	case src.null:
		scatterBits(dv, []uint64{0}, 0, pos)
		return
	case src.valid == nil:
		scatterBits(dv, []uint64{^uint64(0)}, 0, pos)
	default:
		scatterBits(dv, src.valid, -1, pos)
	}
	scatterBits(db, src.b, src.mask, pos)
}

// notNode is NOT e.
type notNode struct {
	e  fnode
	sc *scratch
	v  vec
	b  []uint64
}

func (x *notNode) eval(c *fctx) *vec {
	e := x.e.eval(c)
	if e.null {
		x.v = vec{kind: vBool, mask: 0, null: true}
		return &x.v
	}
	nw := nwords(c.n)
	x.b = grow(x.sc, x.b, nw)
	for w := range x.b {
		x.b[w] = ^e.b[w&e.mask]
	}
	x.v = vec{kind: vBool, mask: -1, b: x.b, valid: e.valid}
	return &x.v
}

// isNullNode is e IS [NOT] NULL, over a child of any kind.
type isNullNode struct {
	e      fnode
	negate bool
	sc     *scratch
	v      vec
	b      []uint64
}

func (x *isNullNode) eval(c *fctx) *vec {
	e := x.e.eval(c)
	nw := nwords(c.n)
	x.b = grow(x.sc, x.b, nw)
	for w := range x.b {
		ok := okWord(e, w)
		if x.negate {
			x.b[w] = ok
		} else {
			x.b[w] = ^ok
		}
	}
	x.v = vec{kind: vBool, mask: -1, b: x.b}
	return &x.v
}
