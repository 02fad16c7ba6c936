package plan

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// pruneColumns makes every operator carry only the columns something above
// it reads: scans read fewer columns (a Parquet scan then decodes fewer
// column chunks), projections compute fewer expressions, joins carry fewer
// columns. It first collects, parents before children, the columns each
// node's consumers need (a node several parents share needs the union),
// then rebuilds the plan bottom-up, each node reporting where its old
// columns went.
func pruneColumns(root Node) (Node, error) {
	order := []Node{}
	visitPlan(root, func(x Node) { order = append(order, x) }) // children first
	need := map[Node][]bool{root: allTrue(root.Schema().NumFields())}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		req := need[n]
		if req == nil {
			req = make([]bool, n.Schema().NumFields())
		}
		for k, c := range n.Children() {
			cr := childNeeds(n, k, req)
			acc := need[c]
			if acc == nil {
				acc = make([]bool, c.Schema().NumFields())
				need[c] = acc
			}
			for j, v := range cr {
				acc[j] = acc[j] || v
			}
		}
	}
	p := &pruner{need: need, done: map[Node]pruned{}}
	r, err := p.rebuild(root)
	if err != nil {
		return nil, err
	}
	return restore(r.node, r.m, root.Schema()), nil
}

func allTrue(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

func mark(req []bool, cols ...int) {
	for _, c := range cols {
		if c >= 0 && c < len(req) {
			req[c] = true
		}
	}
}

// childNeeds is what child k of n must provide for n to produce the
// columns req.
func childNeeds(n Node, k int, req []bool) []bool {
	c := n.Children()[k]
	w := c.Schema().NumFields()
	out := make([]bool, w)
	switch x := n.(type) {
	case *Project:
		for i, e := range x.Exprs {
			if req[i] {
				mark(out, Columns(e)...)
			}
		}
	case *Filter:
		copy(out, req)
		mark(out, Columns(x.Pred)...)
	case *Limit:
		copy(out, req)
	case *Sort:
		copy(out, req)
		for _, key := range x.Keys {
			mark(out, key.Col)
		}
	case *Aggregate:
		mark(out, x.GroupCols...)
		for _, a := range x.Aggs {
			mark(out, a.Col)
		}
	case *Union:
		copy(out, req)
	case *WatermarkAssign:
		copy(out, req)
		mark(out, x.TimeCol)
	case *WindowTable:
		copy(out, req[:w])
		mark(out, x.TimeCol)
	case *Join:
		nl := x.Left.Schema().NumFields()
		m := joinOutput(x)
		if k == 0 {
			for i := 0; i < nl; i++ {
				if o := outputOf(x, m, i); o >= 0 && o < len(req) && req[o] {
					out[i] = true
				}
			}
			mark(out, x.LeftKeys...)
			mark(out, x.LeftOp)
			if x.Time != nil {
				mark(out, x.Time.LeftCol)
			}
			if x.Versioned != nil {
				mark(out, x.Versioned.LeftTime)
			}
		} else {
			for i := 0; i < w; i++ {
				if o := outputOf(x, m, nl+i); o >= 0 && o < len(req) && req[o] {
					out[i] = true
				}
			}
			mark(out, x.RightKeys...)
			mark(out, x.RightOp)
			if x.Time != nil {
				mark(out, x.Time.RightCol)
			}
			if x.Versioned != nil {
				mark(out, x.Versioned.RightTime)
				mark(out, x.Versioned.PrimaryKey...)
			}
		}
		for _, e := range exprsOf(x) {
			for _, col := range Columns(e) {
				if k == 0 && col < nl {
					out[col] = true
				} else if k == 1 && col >= nl {
					out[col-nl] = true
				}
			}
		}
	default:
		return allTrue(w)
	}
	return out
}

// outputOf is the output column of a join's input column i (-1: none).
func outputOf(j *Join, m []int, i int) int {
	nl := j.Left.Schema().NumFields()
	switch j.Kind {
	case JoinSemi, JoinAnti, JoinMark:
		if i >= nl {
			return -1
		}
	}
	return m[i]
}

type pruned struct {
	node Node
	m    []int // old output column -> new, -1: dropped
}

type pruner struct {
	need map[Node][]bool
	done map[Node]pruned
}

func identityOf(n Node) []int { return identityMap(n.Schema().NumFields()) }

func (p *pruner) rebuild(n Node) (pruned, error) {
	if r, ok := p.done[n]; ok {
		return r, nil
	}
	r, err := p.rebuild1(n)
	if err != nil {
		return pruned{}, err
	}
	p.done[n] = r
	return r, nil
}

func (p *pruner) rebuild1(n Node) (pruned, error) {
	req := p.need[n]
	var ch []pruned
	for _, c := range n.Children() {
		r, err := p.rebuild(c)
		if err != nil {
			return pruned{}, err
		}
		ch = append(ch, r)
	}
	remap := func(e Expr, m []int) (Expr, error) { return Remap(e, m) }
	switch x := n.(type) {
	case *Scan:
		var cols []int
		var fs []arrow.Field
		m := make([]int, len(x.Columns))
		for i := range m {
			m[i] = -1
		}
		for i, c := range x.Columns {
			if req[i] {
				m[i] = len(cols)
				cols = append(cols, c)
				fs = append(fs, x.schema.Field(i))
			}
		}
		if len(cols) == 0 {
			// COUNT(*): the narrowest honest read is one column.
			m[0] = 0
			cols, fs = []int{x.Columns[0]}, []arrow.Field{x.schema.Field(0)}
		}
		if len(cols) == len(x.Columns) {
			return pruned{n, identityOf(n)}, nil
		}
		c := *x
		c.Columns, c.schema = cols, arrow.NewSchema(fs, nil)
		// The skip filters name table columns: they stay valid.
		return pruned{&c, m}, nil
	case *Filter:
		pred, err := remap(x.Pred, ch[0].m)
		if err != nil {
			return pruned{}, err
		}
		return pruned{&Filter{Input: ch[0].node, Pred: pred}, ch[0].m}, nil
	case *Project:
		var exprs []Expr
		var names []string
		m := make([]int, len(x.Exprs))
		for i, e := range x.Exprs {
			m[i] = -1
			if !req[i] {
				continue
			}
			ne, err := remap(e, ch[0].m)
			if err != nil {
				return pruned{}, err
			}
			m[i] = len(exprs)
			exprs, names = append(exprs, ne), append(names, x.schema.Field(i).Name)
		}
		if len(exprs) == 0 && len(x.Exprs) > 0 {
			// Nothing read above (COUNT(*)): keep one column for the rows.
			ne, err := remap(x.Exprs[0], ch[0].m)
			if err != nil {
				return pruned{}, err
			}
			exprs, names, m[0] = []Expr{ne}, []string{x.schema.Field(0).Name}, 0
		}
		return pruned{NewProject(ch[0].node, exprs, names), m}, nil
	case *Limit:
		c := *x
		c.Input = ch[0].node
		return pruned{&c, ch[0].m}, nil
	case *Sort:
		c := *x
		c.Input = ch[0].node
		c.Keys = slices.Clone(x.Keys)
		for i := range c.Keys {
			c.Keys[i].Col = ch[0].m[c.Keys[i].Col]
		}
		return pruned{&c, ch[0].m}, nil
	case *Aggregate:
		c := *x
		c.Input = ch[0].node
		c.GroupCols = make([]int, len(x.GroupCols))
		for i, g := range x.GroupCols {
			c.GroupCols[i] = ch[0].m[g]
		}
		c.Aggs = slices.Clone(x.Aggs)
		for i := range c.Aggs {
			c.Aggs[i].Col = mapCol(ch[0].m, c.Aggs[i].Col)
		}
		return pruned{&c, identityOf(n)}, nil
	case *Union:
		// Every input must come out with the same columns.
		var ins []Node
		var m []int
		for i, in := range ch {
			keep, mm := selectNeeded(in, req)
			ins = append(ins, keep)
			if i == 0 {
				m = mm
			}
		}
		return pruned{&Union{Inputs: ins}, m}, nil
	case *WatermarkAssign:
		c := *x
		c.Input = ch[0].node
		c.TimeCol = ch[0].m[x.TimeCol]
		return pruned{&c, ch[0].m}, nil
	case *WindowTable:
		c := *x
		c.Input = ch[0].node
		c.TimeCol = ch[0].m[x.TimeCol]
		win := c.Input.Schema().NumFields()
		fs := append(append([]arrow.Field(nil), c.Input.Schema().Fields()...), x.schema.Fields()[len(ch[0].m):]...)
		c.schema = arrow.NewSchema(fs, nil)
		m := append(append([]int(nil), ch[0].m...), win, win+1, win+2)
		return pruned{&c, m}, nil
	case *Join:
		return p.rebuildJoin(x, ch[0], ch[1])
	}
	// Everything else needs all its input: restore each child's columns.
	if len(ch) > 0 {
		next := make([]Node, len(ch))
		for i, c := range ch {
			next[i] = restore(c.node, c.m, n.Children()[i].Schema())
		}
		n = withChildren(n, next)
	}
	return pruned{n, identityOf(n)}, nil
}

// selectNeeded projects a pruned input to exactly the needed columns, in
// order (a UNION's inputs must agree).
func selectNeeded(in pruned, req []bool) (Node, []int) {
	var exprs []Expr
	var names []string
	m := make([]int, len(req))
	s := in.node.Schema()
	for i, r := range req {
		m[i] = -1
		if !r {
			continue
		}
		k := in.m[i]
		m[i] = len(exprs)
		exprs, names = append(exprs, NewColRef(k, s.Field(k).Name, s.Field(k).Type)), append(names, s.Field(k).Name)
	}
	if len(exprs) == 0 && len(req) > 0 {
		k := in.m[0]
		exprs, names, m[0] = []Expr{NewColRef(k, s.Field(k).Name, s.Field(k).Type)}, []string{s.Field(k).Name}, 0
	}
	p := NewProject(in.node, exprs, names)
	if isIdentity(p) {
		return in.node, m
	}
	return p, m
}

// restore projects a pruned node back to the old schema's columns (all of
// which it still has).
func restore(n Node, m []int, old *arrow.Schema) Node {
	same := n.Schema().NumFields() == len(m)
	for i, k := range m {
		same = same && k == i
	}
	if same {
		return n
	}
	exprs := make([]Expr, len(m))
	s := n.Schema()
	for i, k := range m {
		if k < 0 {
			panic(fmt.Sprintf("plan: column %d (%s) was pruned but is needed", i, old.Field(i).Name))
		}
		exprs[i] = NewColRef(k, s.Field(k).Name, s.Field(k).Type)
	}
	return NewProject(n, exprs, fieldNames(old))
}

func (p *pruner) rebuildJoin(x *Join, l, r pruned) (pruned, error) {
	c := *x
	c.Left, c.Right = l.node, r.node
	nl, nlNew := x.Left.Schema().NumFields(), l.node.Schema().NumFields()
	jm := make([]int, nl+x.Right.Schema().NumFields())
	for i := range jm {
		if i < nl {
			jm[i] = l.m[i]
		} else if k := r.m[i-nl]; k >= 0 {
			jm[i] = nlNew + k
		} else {
			jm[i] = -1
		}
	}
	c.LeftKeys, c.RightKeys = make([]int, len(x.LeftKeys)), make([]int, len(x.RightKeys))
	for i := range x.LeftKeys {
		c.LeftKeys[i], c.RightKeys[i] = l.m[x.LeftKeys[i]], r.m[x.RightKeys[i]]
	}
	if x.LeftOp >= 0 {
		c.LeftOp = l.m[x.LeftOp]
	}
	if x.RightOp >= 0 {
		c.RightOp = r.m[x.RightOp]
	}
	if x.Time != nil {
		t := *x.Time
		t.LeftCol, t.RightCol = l.m[t.LeftCol], r.m[t.RightCol]
		c.Time = &t
	}
	if x.Versioned != nil {
		v := VersionedJoin{LeftTime: l.m[x.Versioned.LeftTime], RightTime: r.m[x.Versioned.RightTime]}
		for _, k := range x.Versioned.PrimaryKey {
			v.PrimaryKey = append(v.PrimaryKey, r.m[k])
		}
		c.Versioned = &v
	}
	var err error
	if x.On != nil {
		if c.On, err = Remap(x.On, jm); err != nil {
			return pruned{}, err
		}
	}
	if x.Residual != nil {
		if c.Residual, err = Remap(x.Residual, jm); err != nil {
			return pruned{}, err
		}
	}
	c.schema = joinOutputSchema(&c)
	// Where each old output column went.
	oldOut, newOut := joinOutput(x), joinOutput(&c)
	m := make([]int, x.schema.NumFields())
	for i := range m {
		m[i] = -1
	}
	if x.Changelog {
		m[0] = 0
	}
	for i := range jm {
		o := outputOf(x, oldOut, i)
		if o < 0 || jm[i] < 0 {
			continue
		}
		m[o] = newOut[jm[i]]
	}
	if x.Kind == JoinMark {
		m[nl] = nlNew
	}
	return pruned{&c, m}, nil
}
