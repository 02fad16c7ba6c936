package plan

import (
	"math"
	"slices"
)

// orderJoins reorders each cluster of inner batch joins (a comma FROM list
// and its WHERE conditions, or a chain of JOIN ... ON) so that no join is
// a cross product when a condition can connect it, and so that the side
// built into a hash table is the smaller one: the largest input (by its
// table's row count, shrunk for each filter on it) is probed, and the
// remaining inputs join one at a time, each the smallest estimate among
// those a condition connects to what is joined so far. Conditions go to
// the first join where every input they read is present; a projection on
// top restores the original column order.
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
	return j, ok && j.Kind == JoinInner && !j.Stream && !j.Changelog
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
	est   float64
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
		leaves = append(leaves, &joinLeaf{n: r, off: off, width: n.Schema().NumFields(), est: estimateRows(r)})
		return nil
	}
	if err := flatten(top, 0); err != nil {
		return nil, err
	}
	if len(leaves) < 3 && !crossFirst(leaves, conds) {
		// Two inputs: keep the written order unless the estimates say the
		// left one should be built.
		if len(leaves) == 2 && leaves[0].est < leaves[1].est && connected(conds, leaves, []int{0}, 1) {
			return o.build(top, leaves, conds, []int{1, 0})
		}
		return o.build(top, leaves, conds, []int{0, 1}[:len(leaves)])
	}
	// The probe side: the largest estimate (the first written on ties).
	start := 0
	for i, l := range leaves {
		if l.est > leaves[start].est {
			start = i
		}
	}
	order := []int{start}
	used := make([]bool, len(leaves))
	used[start] = true
	for len(order) < len(leaves) {
		best, bestConnected := -1, false
		for i, l := range leaves {
			if used[i] {
				continue
			}
			c := connected(conds, leaves, order, i)
			switch {
			case best < 0, c && !bestConnected, c == bestConnected && l.est < leaves[best].est:
				best, bestConnected = i, c
			}
		}
		used[best] = true
		order = append(order, best)
	}
	return o.build(top, leaves, conds, order)
}

// crossFirst reports whether two leaves have no condition between them.
func crossFirst(leaves []*joinLeaf, conds []Expr) bool {
	return len(leaves) == 2 && !connected(conds, leaves, []int{0}, 1)
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

// connected reports whether an equality joins leaf i to the leaves of
// have: one side reading only leaf i, the other only leaves of have. Other
// conditions (an OR of both sides, an inequality) do not connect: joining
// by them is a filtered cross product.
func connected(conds []Expr, leaves []*joinLeaf, have []int, i int) bool {
	onlyIn := func(e Expr, set func(int) bool) bool {
		cols := Columns(e)
		if len(cols) == 0 {
			return false
		}
		for _, col := range cols {
			if !set(leafOf(leaves, col)) {
				return false
			}
		}
		return true
	}
	isI := func(l int) bool { return l == i }
	inHave := func(l int) bool { return slices.Contains(have, l) }
	for _, c := range conds {
		call, ok := c.(*Call)
		if !ok || (call.Op != "=" && call.Op != "IS NOT DISTINCT FROM") {
			continue
		}
		a, b := call.Args[0], call.Args[1]
		if (onlyIn(a, isI) && onlyIn(b, inHave)) || (onlyIn(b, isI) && onlyIn(a, inHave)) {
			return true
		}
	}
	return false
}

// build makes the left-deep join of the leaves in order, each condition on
// the first join that has all it reads, and a projection back to the
// cluster's original columns.
func (o *joinOrderer) build(top *Join, leaves []*joinLeaf, conds []Expr, order []int) (Node, error) {
	total := top.Schema().NumFields()
	m := make([]int, total) // old cluster column -> new
	pos := 0
	for _, i := range order {
		l := leaves[i]
		for k := 0; k < l.width; k++ {
			m[l.off+k] = pos + k
		}
		pos += l.width
	}
	placed := make([]bool, len(conds))
	var n Node = leaves[order[0]].n
	have := []int{order[0]}
	for _, i := range order[1:] {
		have = append(have, i)
		var on []Expr
		for ci, c := range conds {
			if placed[ci] {
				continue
			}
			ok := true
			for _, col := range Columns(c) {
				if !slices.Contains(have, leafOf(leaves, col)) {
					ok = false
				}
			}
			if ok {
				rc, err := Remap(c, m)
				if err != nil {
					return nil, err
				}
				on, placed[ci] = append(on, rc), true
			}
		}
		cond, err := And(on...)
		if err != nil {
			return nil, err
		}
		n = newJoin(n, leaves[i].n, JoinInner, cond)
	}
	var rest []Expr
	for ci, c := range conds {
		if !placed[ci] {
			rc, err := Remap(c, m)
			if err != nil {
				return nil, err
			}
			rest = append(rest, rc)
		}
	}
	if len(rest) > 0 { // conditions over no column: constants
		var err error
		if n, err = over(n, rest); err != nil {
			return nil, err
		}
	}
	same := true
	for i, v := range m {
		same = same && v == i
	}
	if same {
		return n, nil
	}
	s := n.Schema()
	exprs := make([]Expr, total)
	for i, v := range m {
		exprs[i] = NewColRef(v, s.Field(v).Name, s.Field(v).Type)
	}
	return NewProject(n, exprs, fieldNames(top.Schema())), nil
}

// estimateRows guesses a relation's rows: a scan's table size (its
// metadata), a fifth of it per filter conjunct above; unknown sizes count
// as large.
func estimateRows(n Node) float64 {
	switch x := n.(type) {
	case *Scan:
		if c, ok := x.Table.(rowCounter); ok && c.NumRows() >= 0 {
			return float64(c.NumRows())
		}
		return 1e9
	case *Values:
		return float64(len(x.Rows))
	case *Filter:
		return estimateRows(x.Input) * math.Pow(0.2, float64(len(Conjuncts(x.Pred))))
	case *Project, *WatermarkAssign:
		return estimateRows(n.Children()[0])
	case *Aggregate:
		if len(x.GroupCols) == 0 {
			return 1
		}
		return estimateRows(x.Input) / 10
	case *Limit:
		if x.N >= 0 {
			return math.Min(float64(x.N), estimateRows(x.Input))
		}
	case *Join:
		l, r := estimateRows(x.Left), estimateRows(x.Right)
		switch x.Kind {
		case JoinSemi, JoinAnti, JoinMark, JoinLeft, JoinSingle:
			return l
		}
		return math.Max(l, r)
	}
	ch := n.Children()
	if len(ch) == 1 {
		return estimateRows(ch[0])
	}
	return 1e9
}
