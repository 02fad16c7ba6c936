package plan

// reduceAggregates gives a GROUP BY under one side of a join only the input
// rows whose group keys can meet the other side: its input is semi-joined
// with the join keys of a cheap filtered subtree of the other side first.
// Decorrelation turns a correlated scalar subquery (TPC-H Q2, Q17, Q20)
// into a join with an aggregate over the whole inner table, grouped by the
// correlation key; the outer side keeps few keys (Q17: 185 parts of
// 200,000), so the aggregate would build 200,000 groups over 6M rows of
// which 185 are ever read. This is the effect of DuckDB's delim join and
// of magic-set rewriting, as a plain SEMI join the executor already has.
//
// A group that meets no row of the other side is never read by an inner,
// left (aggregate on the right), semi, anti, mark or single join, so
// dropping its rows before aggregating changes nothing. The key set may be
// a superset of the keys the other side ends up with (it is taken below
// that side's inner joins and above none of its filters' effects it
// skips), which only reduces less. It is taken only from a scan with
// filters and projections over it, so the extra work is one more filtered
// scan of a table the query reads anyway, and only when that scan is
// estimated well under the aggregate's input.
func reduceAggregates(root Node) (Node, error) {
	return rewritePlan(root, func(n Node) (Node, error) {
		j, ok := n.(*Join)
		if !ok || j.On == nil || j.Stream || j.Changelog || j.LeftOp >= 0 || j.RightOp >= 0 {
			return n, nil
		}
		nl := j.Left.Schema().NumFields()
		if j.Kind != JoinRight && j.Kind != JoinFull {
			if r, ok := reduceSide(j.Right, nl, j.Left, 0, j.On); ok {
				c := *j
				c.Right = r
				return &c, nil
			}
		}
		if j.Kind == JoinInner {
			if l, ok := reduceSide(j.Left, 0, j.Right, nl, j.On); ok {
				c := *j
				c.Left = l
				return &c, nil
			}
		}
		return n, nil
	})
}

// reduceSide rewrites the aggregate under side (whose columns start at
// sideOff in on's layout) to read only rows meeting other (at otherOff).
func reduceSide(side Node, sideOff int, other Node, otherOff int, on Expr) (Node, bool) {
	ns, no := side.Schema().NumFields(), other.Schema().NumFields()
	var agg *Aggregate
	var aggCols, otherCols []int // the group keys' input columns; the other side's columns
	for _, c := range Conjuncts(on) {
		call, ok := c.(*Call)
		if !ok || call.Op != "=" {
			continue
		}
		a, aok := call.Args[0].(*ColRef)
		b, bok := call.Args[1].(*ColRef)
		if !aok || !bok {
			continue
		}
		if a.Index >= otherOff && a.Index < otherOff+no {
			a, b = b, a
		}
		sc, oc := a.Index-sideOff, b.Index-otherOff
		if sc < 0 || sc >= ns || oc < 0 || oc >= no {
			continue
		}
		g, in, ok := groupInput(side, sc)
		if !ok || (agg != nil && g != agg) {
			continue
		}
		agg = g
		aggCols, otherCols = append(aggCols, in), append(otherCols, oc)
	}
	if agg == nil {
		return nil, false
	}
	src, srcCols, kept, ok := keySource(other, otherCols)
	if !ok || estimateOf(src).rows*4 > estimateOf(agg.Input).rows {
		return nil, false
	}
	cols := make([]int, len(kept))
	for i, k := range kept {
		cols[i] = aggCols[k]
	}
	aggCols = cols
	// The key source's columns, projected, then the SEMI join on them.
	exprs := make([]Expr, len(srcCols))
	names := make([]string, len(srcCols))
	for i, c := range srcCols {
		f := src.Schema().Field(c)
		exprs[i], names[i] = NewColRef(c, f.Name, f.Type), f.Name
	}
	keys := NewProject(src, exprs, names)
	in := agg.Input
	nin := in.Schema().NumFields()
	var conds []Expr
	for i, c := range aggCols {
		f := in.Schema().Field(c)
		eq, err := binaryCall("=", NewColRef(c, f.Name, f.Type), NewColRef(nin+i, names[i], exprs[i].Type()))
		if err != nil {
			return nil, false
		}
		conds = append(conds, eq)
	}
	cond, err := And(conds...)
	if err != nil {
		return nil, false
	}
	reduced := *agg
	reduced.Input = newJoin(in, keys, JoinSemi, cond)
	return replaceNode(side, agg, &reduced), true
}

// groupInput follows column c of n down through projections and filters
// to an aggregate: the aggregate and the input column of the group key c
// is; ok false when c is anything else.
func groupInput(n Node, c int) (*Aggregate, int, bool) {
	switch x := n.(type) {
	case *Filter:
		return groupInput(x.Input, c)
	case *Project:
		r, ok := x.Exprs[c].(*ColRef)
		if !ok {
			return nil, 0, false
		}
		return groupInput(x.Input, r.Index)
	case *Aggregate:
		if x.Updating || c >= len(x.GroupCols) {
			return nil, 0, false
		}
		return x, x.GroupCols[c], true
	}
	return nil, 0, false
}

// keySource finds, under n, the smallest subtree whose values of columns
// cols hold every value n's columns cols have: through filters,
// projections of plain columns, the input of an inner join that has all
// of them, and the preserved input of a left, semi or anti join. Where
// that ends at no filtered scan, an inner or semi join's equalities lead
// to its other input for the columns they equate (a subset: the rest are
// dropped, which only reduces less). kept are the indexes into cols of
// the columns src's srcCols stand for. It must end at a filtered scan (a
// subtree of scans, filters and projections with a filter or a scan
// predicate), or the reduction would cost more than it saves.
func keySource(n Node, cols []int) (src Node, srcCols, kept []int, ok bool) {
	all := make([]int, len(cols))
	for i := range all {
		all[i] = i
	}
	switch x := n.(type) {
	case *Project:
		m := make([]int, len(cols))
		for i, c := range cols {
			r, isCol := x.Exprs[c].(*ColRef)
			if !isCol {
				return nil, nil, nil, false
			}
			m[i] = r.Index
		}
		if src, sc, kept, ok := keySource(x.Input, m); ok {
			return src, sc, kept, true
		}
		return x, cols, all, filteredScan(x)
	case *Filter:
		if filteredScan(x) {
			return x, cols, all, true
		}
		return keySource(x.Input, cols)
	case *Scan:
		return x, cols, all, filteredScan(x)
	case *Join:
		if x.Stream || x.Changelog {
			return nil, nil, nil, false
		}
		nl := x.Left.Schema().NumFields()
		left, right := true, true
		for _, c := range cols {
			left = left && c < nl
			right = right && c >= nl
		}
		switch {
		case left && (x.Kind == JoinInner || x.Kind == JoinLeft || x.Kind == JoinSemi || x.Kind == JoinAnti):
			if src, sc, kept, ok := keySource(x.Left, cols); ok {
				return src, sc, kept, true
			}
			if x.Kind == JoinInner || x.Kind == JoinSemi {
				return keysAcross(x, cols, nl)
			}
		case right && x.Kind == JoinInner:
			m := make([]int, len(cols))
			for i, c := range cols {
				m[i] = c - nl
			}
			return keySource(x.Right, m)
		}
	}
	return nil, nil, nil, false
}

// keysAcross follows the left columns cols of an inner or semi join to the
// right input's columns its ON equates them with (a left row survives only
// with a right row of equal key), dropping the columns it equates with
// none.
func keysAcross(j *Join, cols []int, nl int) (Node, []int, []int, bool) {
	var rcols, idx []int
	for i, c := range cols {
		for _, cj := range Conjuncts(j.On) {
			call, isCall := cj.(*Call)
			if !isCall || call.Op != "=" {
				continue
			}
			a, aok := call.Args[0].(*ColRef)
			b, bok := call.Args[1].(*ColRef)
			if !aok || !bok {
				continue
			}
			if b.Index == c && a.Index >= nl {
				a, b = b, a
			}
			if a.Index == c && b.Index >= nl {
				rcols, idx = append(rcols, b.Index-nl), append(idx, i)
				break
			}
		}
	}
	if len(rcols) == 0 {
		return nil, nil, nil, false
	}
	src, sc, kept, ok := keySource(j.Right, rcols)
	if !ok {
		return nil, nil, nil, false
	}
	out := make([]int, len(kept))
	for i, k := range kept {
		out[i] = idx[k]
	}
	return src, sc, out, true
}

// filteredScan reports whether n is scans, filters and projections only,
// with something that filters.
func filteredScan(n Node) bool {
	filtered := false
	var walk func(Node) bool
	walk = func(n Node) bool {
		switch x := n.(type) {
		case *Filter:
			filtered = true
			return walk(x.Input)
		case *Project:
			return walk(x.Input)
		case *Scan:
			filtered = filtered || len(x.Pred) > 0 || len(x.Filters) > 0
			return true
		}
		return false
	}
	return walk(n) && filtered
}

// replaceNode rebuilds the chain from n down to old with new in its place.
func replaceNode(n, old, new Node) Node {
	if n == old {
		return new
	}
	ch := n.Children()
	next := make([]Node, len(ch))
	for i, c := range ch {
		next[i] = replaceNode(c, old, new)
	}
	return withChildren(n, next)
}
