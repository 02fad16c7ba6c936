package plan

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// orderJoins reorders each cluster of inner batch joins (a comma FROM list
// and its WHERE conditions, or a chain of JOIN ... ON) by greedy operator
// ordering over cardinality estimates (estimate.go): the two relations an
// equality connects whose join is estimated smallest are joined first,
// over and over, so small filtered inputs meet before the large ones and
// the tree may be bushy (TPC-H Q5 joins supplier, nation and the filtered
// region before lineitem); no join is a cross product while an equality
// can connect it. The larger input of each join is probed, the smaller
// built. Conditions go to the first join where every input they read is
// present; a projection on top restores the original column order.
func orderJoins(root Node) (Node, error) {
	parents := map[Node]int{}
	visitPlan(root, func(x Node) {
		for _, c := range x.Children() {
			parents[c]++
		}
	})
	o := &joinOrderer{parents: parents, memo: map[Node]Node{}}
	return o.rewrite(root)
}

type joinOrderer struct {
	parents map[Node]int
	memo    map[Node]Node
}

// clusterJoin is a join whose inputs may be reordered with its parent's.
func clusterJoin(n Node) (*Join, bool) {
	j, ok := n.(*Join)
	return j, ok && j.Kind == JoinInner && !j.Stream && !j.Changelog && !j.temporal()
}

func (o *joinOrderer) rewrite(n Node) (Node, error) {
	if r, ok := o.memo[n]; ok {
		return r, nil
	}
	var out Node
	var err error
	if j, ok := clusterJoin(n); ok {
		out, err = o.reorder(j)
	} else {
		ch := n.Children()
		next := make([]Node, len(ch))
		changed := false
		for i, c := range ch {
			if next[i], err = o.rewrite(c); err != nil {
				return nil, err
			}
			changed = changed || next[i] != c
		}
		out = n
		if changed {
			out = withChildren(n, next)
		}
	}
	if err != nil {
		return nil, err
	}
	o.memo[n] = out
	return out, nil
}

// joinLeaf is one input of a cluster: its columns start at off in the
// cluster's output.
type joinLeaf struct {
	n     Node
	off   int
	width int
	est   estimate
}

func (o *joinOrderer) reorder(top *Join) (Node, error) {
	var leaves []*joinLeaf
	var conds []Expr // over the cluster's output columns
	var flatten func(n Node, off int) error
	flatten = func(n Node, off int) error {
		if j, ok := clusterJoin(n); ok && (n == Node(top) || o.parents[n] <= 1) {
			if j.On != nil {
				for _, c := range Conjuncts(j.On) {
					conds = append(conds, Shift(c, off))
				}
			}
			if err := flatten(j.Left, off); err != nil {
				return err
			}
			return flatten(j.Right, off+j.Left.Schema().NumFields())
		}
		r, err := o.rewrite(n)
		if err != nil {
			return err
		}
		leaves = append(leaves, &joinLeaf{n: r, off: off, width: n.Schema().NumFields(), est: estimateOf(r)})
		return nil
	}
	if err := flatten(top, 0); err != nil {
		return nil, err
	}
	// Greedy operator ordering (Fegaras): join, again and again, the two
	// relations an equality connects whose join is estimated smallest;
	// a pair no equality connects only when none is left. The larger input
	// of each join is probed, the smaller built.
	rels := make([]*joinRel, len(leaves))
	for i, l := range leaves {
		ndv := map[int]float64{}
		for k := 0; k < l.width; k++ {
			if l.est.known(k) {
				ndv[l.off+k] = l.est.col(k)
			}
		}
		rels[i] = &joinRel{leaves: []int{i}, rows: l.est.rows, ndv: ndv, leaf: i}
	}
	for len(rels) > 1 {
		bi, bj, best, found := -1, -1, math.Inf(1), false
		for i := range rels {
			for j := i + 1; j < len(rels); j++ {
				rows, ok := joinEstimate(rels[i], rels[j], conds, leaves)
				if !ok && found {
					continue
				}
				if ok && !found {
					found, best = true, math.Inf(1)
				}
				if !ok {
					rows = rels[i].rows * rels[j].rows // a cross product
				}
				if rows < best {
					bi, bj, best = i, j, rows
				}
			}
		}
		a, b := rels[bi], rels[bj]
		m := &joinRel{leaves: append(append([]int(nil), a.leaves...), b.leaves...), rows: math.Max(best, 1),
			ndv: map[int]float64{}, left: a, right: b, leaf: -1}
		for _, r := range []*joinRel{a, b} {
			for c, v := range r.ndv {
				m.ndv[c] = math.Min(v, m.rows)
			}
		}
		rels = append(append(rels[:bi:bi], rels[bi+1:bj]...), rels[bj+1:]...)
		rels = append(rels, m)
	}
	placed := make([]bool, len(conds))
	n, cols, err := o.buildRel(rels[0], leaves, conds, placed)
	if err != nil {
		return nil, err
	}
	// Conditions over no column (constants) filter the whole.
	var rest []Expr
	pos := positions(cols)
	for ci, c := range conds {
		if !placed[ci] {
			rc, err := Remap(c, pos)
			if err != nil {
				return nil, err
			}
			rest = append(rest, rc)
		}
	}
	if len(rest) > 0 {
		if n, err = over(n, rest); err != nil {
			return nil, err
		}
	}
	return restoreOrder(n, cols, top.Schema()), nil
}

// joinRel is a relation of the greedy ordering: a leaf, or the join of two.
type joinRel struct {
	leaves      []int
	rows        float64
	ndv         map[int]float64 // by cluster column
	leaf        int             // >= 0 for a leaf
	left, right *joinRel
}

// relOf reports which relation's leaves hold every column e reads: 1 for
// a, 2 for b, 0 neither or both.
func relOf(e Expr, a, b *joinRel, leaves []*joinLeaf) int {
	cols := Columns(e)
	if len(cols) == 0 {
		return 0
	}
	in := func(r *joinRel, c int) bool { return slices.Contains(r.leaves, leafOf(leaves, c)) }
	side := 0
	for _, c := range cols {
		s := 0
		switch {
		case in(a, c):
			s = 1
		case in(b, c):
			s = 2
		default:
			return 0
		}
		if side != 0 && s != side {
			return 0
		}
		side = s
	}
	return side
}

// joinEstimate is |a| x |b| / max(ndv) for the most selective equality
// between a and b (several equalities between two relations are mostly
// one composite key, TPC-H's (partkey, suppkey): multiplying their
// selectivities would take a 6M-row join for 2,400 rows); ok is false
// when no equality connects them.
func joinEstimate(a, b *joinRel, conds []Expr, leaves []*joinLeaf) (float64, bool) {
	div, ok := 1.0, false
	ndvOf := func(r *joinRel, e Expr) float64 {
		if c, isCol := e.(*ColRef); isCol {
			if v, known := r.ndv[c.Index]; known {
				return math.Max(v, 1)
			}
		}
		return math.Max(r.rows, 1)
	}
	for _, c := range conds {
		call, isCall := c.(*Call)
		if !isCall || (call.Op != "=" && call.Op != "IS NOT DISTINCT FROM") {
			continue
		}
		x, y := call.Args[0], call.Args[1]
		sx, sy := relOf(x, a, b, leaves), relOf(y, a, b, leaves)
		if sx == 0 || sy == 0 || sx == sy {
			continue
		}
		if sx == 2 {
			x, y = y, x
		}
		div = math.Max(div, math.Max(ndvOf(a, x), ndvOf(b, y)))
		ok = true
	}
	return a.rows * b.rows / div, ok
}

// buildRel builds a relation of the ordering: its plan and the cluster
// columns it outputs, in order.
func (o *joinOrderer) buildRel(r *joinRel, leaves []*joinLeaf, conds []Expr, placed []bool) (Node, []int, error) {
	if r.leaf >= 0 {
		l := leaves[r.leaf]
		cols := make([]int, l.width)
		for k := range cols {
			cols[k] = l.off + k
		}
		return l.n, cols, nil
	}
	probe, build := r.left, r.right
	if build.rows > probe.rows {
		probe, build = build, probe
	}
	ln, lcols, err := o.buildRel(probe, leaves, conds, placed)
	if err != nil {
		return nil, nil, err
	}
	rn, rcols, err := o.buildRel(build, leaves, conds, placed)
	if err != nil {
		return nil, nil, err
	}
	cols := append(append([]int(nil), lcols...), rcols...)
	pos := positions(cols)
	var on []Expr
	for ci, c := range conds {
		if placed[ci] {
			continue
		}
		inside := len(Columns(c)) > 0
		for _, col := range Columns(c) {
			inside = inside && slices.Contains(r.leaves, leafOf(leaves, col))
		}
		if !inside {
			continue
		}
		rc, err := Remap(c, pos)
		if err != nil {
			return nil, nil, err
		}
		on, placed[ci] = append(on, rc), true
	}
	cond, err := And(on...)
	if err != nil {
		return nil, nil, err
	}
	return newJoin(ln, rn, JoinInner, cond), cols, nil
}

// positions maps cluster columns to their place in cols (-1: absent).
func positions(cols []int) []int {
	width := 0
	for _, c := range cols {
		width = max(width, c+1)
	}
	pos := make([]int, width)
	for i := range pos {
		pos[i] = -1
	}
	for i, c := range cols {
		pos[c] = i
	}
	return pos
}

// restoreOrder projects n, whose columns are the cluster columns cols,
// back to the cluster's original order.
func restoreOrder(n Node, cols []int, orig *arrow.Schema) Node {
	same := true
	for i, c := range cols {
		same = same && c == i
	}
	if same {
		return n
	}
	pos := positions(cols)
	s := n.Schema()
	exprs := make([]Expr, orig.NumFields())
	for i := range exprs {
		p := pos[i]
		exprs[i] = NewColRef(p, s.Field(p).Name, s.Field(p).Type)
	}
	return NewProject(n, exprs, fieldNames(orig))
}

// leafOf is the leaf holding cluster column c.
func leafOf(leaves []*joinLeaf, c int) int {
	for i, l := range leaves {
		if c >= l.off && c < l.off+l.width {
			return i
		}
	}
	return -1
}
