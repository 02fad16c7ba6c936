package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// This file is the generic side of the logical plan: what expressions each
// node holds and how to rebuild a node over new children or expressions,
// so rules can walk and rewrite any plan without a case per node kind.

// exprsOf lists the expressions n holds, in a fixed order.
func exprsOf(n Node) []Expr {
	switch x := n.(type) {
	case *Filter:
		return []Expr{x.Pred}
	case *Project:
		return x.Exprs
	case *Join:
		var out []Expr
		if x.On != nil {
			out = append(out, x.On)
		}
		if x.Residual != nil {
			out = append(out, x.Residual)
		}
		return out
	}
	return nil
}

// withExprs is n holding exprs (as exprsOf listed them) instead.
func withExprs(n Node, exprs []Expr) Node {
	switch x := n.(type) {
	case *Filter:
		return &Filter{Input: x.Input, Pred: exprs[0]}
	case *Project:
		return NewProject(x.Input, exprs, fieldNames(x.schema))
	case *Join:
		c := *x
		i := 0
		if x.On != nil {
			c.On, i = exprs[0], 1
		}
		if x.Residual != nil {
			c.Residual = exprs[i]
		}
		return &c
	}
	return n
}

// withChildren is n over new children, of the same schemas as the old.
func withChildren(n Node, ch []Node) Node {
	switch x := n.(type) {
	case *Scan, *Values:
		return n
	case *Filter:
		return &Filter{Input: ch[0], Pred: x.Pred}
	case *Project:
		return &Project{Input: ch[0], Exprs: x.Exprs, schema: x.schema}
	case *Aggregate:
		c := *x
		c.Input = ch[0]
		return &c
	case *Join:
		c := *x
		c.Left, c.Right = ch[0], ch[1]
		return &c
	case *Sort:
		c := *x
		c.Input = ch[0]
		return &c
	case *UpdatingTopN:
		c := *x
		c.Input = ch[0]
		return &c
	case *StreamRank:
		c := *x
		c.Input = ch[0]
		return &c
	case *Limit:
		c := *x
		c.Input = ch[0]
		return &c
	case *Union:
		return &Union{Inputs: ch}
	case *SetOp:
		c := *x
		c.Left, c.Right = ch[0], ch[1]
		return &c
	case *WindowFuncs:
		c := *x
		c.Input = ch[0]
		return &c
	case *Expand:
		c := *x
		c.Input = ch[0]
		return &c
	case *WatermarkAssign:
		c := *x
		c.Input = ch[0]
		return &c
	case *WindowTable:
		c := *x
		c.Input = ch[0]
		return &c
	case *WindowAggregate:
		c := *x
		c.Input = ch[0]
		return &c
	}
	panic(fmt.Sprintf("plan: withChildren of %T", n))
}

// visitPlan calls f on every node of the plan under n once (a node shared
// by several parents, a CTE's, is visited once), children first.
func visitPlan(n Node, f func(Node)) {
	seen := map[Node]bool{}
	var walk func(Node)
	walk = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, c := range n.Children() {
			walk(c)
		}
		f(n)
	}
	walk(n)
}

// hasOuterRefAt reports whether the plan under n references a column of
// the query level scopes out of it (1: the query it is a subquery of).
func hasOuterRefAt(n Node, level int) bool {
	found := false
	visitPlan(n, func(x Node) {
		for _, e := range exprsOf(x) {
			if exprHasOuterRefAt(e, level) {
				found = true
			}
		}
	})
	return found
}

func exprHasOuterRefAt(e Expr, level int) bool {
	return Contains(e, func(x Expr) bool {
		switch v := x.(type) {
		case *OuterRef:
			return v.Level == level
		case *SubqueryExpr:
			return hasOuterRefAt(v.Plan, level+1)
		}
		return false
	})
}

// rewritePlan rebuilds the plan under n bottom-up: f sees each node over
// its already rewritten children and returns its replacement. A shared
// node is rewritten once and stays shared.
func rewritePlan(n Node, f func(Node) (Node, error)) (Node, error) {
	memo := map[Node]Node{}
	var walk func(Node) (Node, error)
	walk = func(n Node) (Node, error) {
		if r, ok := memo[n]; ok {
			return r, nil
		}
		ch := n.Children()
		var next []Node
		for i, c := range ch {
			nc, err := walk(c)
			if err != nil {
				return nil, err
			}
			if nc != c && next == nil {
				next = append([]Node(nil), ch...)
			}
			if next != nil {
				next[i] = nc
			}
		}
		cur := n
		if next != nil {
			cur = withChildren(n, next)
		}
		r, err := f(cur)
		if err != nil {
			return nil, err
		}
		memo[n] = r
		return r, nil
	}
	return walk(n)
}

// sameSchema reports whether two schemas have the same column types.
func sameTypes(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		if !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}
